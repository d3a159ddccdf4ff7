/**
 * Problems found in user-written documents (definitions, persisted states), and the readable text for zod
 * issues: a field path such as `release.phases[2].subworkflow` and a reason such as
 * `expected a non-negative integer, got "x"`. Never calls zod's own formatters (they once crashed on keys named
 * like Object.prototype members) and never coerces an unknown value to a string implicitly.
 */
import type { z } from "zod";
import type { WorkflowErrorCode } from "./workflow-error.js";

/** The codes a definition problem can carry: exactly what compileDefinitions reports and refuses with. */
export type DefinitionCode = Extract<
  WorkflowErrorCode,
  | "INVALID_DEFINITION"
  | "DANGLING_REFERENCE"
  | "DEFINITION_CYCLE"
  | "DUPLICATE_PHASE_ID"
  | "TOOL_LISTS_CONFLICT"
  | "INVALID_COMMAND_NAME"
  | "EMPTY_PHASES"
  | "DUPLICATE_COMMAND_NAME"
  | "UNKNOWN_PROFILE"
  | "NESTING_TOO_DEEP"
  | "UNKNOWN_TEMPLATE_VARIABLE"
  | "UNKNOWN_PHASE"
>;

/** One thing wrong with a set of workflow definitions, with where it is and how to fix it. */
export interface DefinitionProblem {
  readonly code: DefinitionCode;
  /** Where, starting at the workflow key: `release.phases[2].subworkflow`. */
  readonly path: string;
  /** A full sentence that names the path and the offending value. */
  readonly message: string;
  /** How to fix it, in one sentence. */
  readonly hint: string;
  /** The workflow this problem makes unusable (or, for a warning, concerns), when there is one. */
  readonly workflowKey?: string;
  /** "warning": the workflow still loads (pi-workflows warns there too), the user is told once. Absent: an error. */
  readonly severity?: "warning";
  /** For a problem inside a text field (a template): the 1-based line within that text. */
  readonly line?: number;
}

/** True for a problem that keeps its workflow from loading (every problem that is not a warning). */
export function isBlocking(problem: Pick<DefinitionProblem, "severity">): boolean {
  return problem.severity !== "warning";
}

/** A path into a JSON document: object keys and array indexes. */
export type FieldPath = readonly PropertyKey[];

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** Renders a path the way a user reads it: `a.b[2].c`, with odd keys quoted (`a["x.y"]`). */
export function formatPath(path: FieldPath): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (typeof segment === "symbol") out += "[symbol]";
    else if (IDENTIFIER.test(segment)) out += out === "" ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out === "" ? "(root)" : out;
}

/** Appends one segment to a formatted path prefix (prefix may be empty). */
export function joinPath(prefix: string, path: FieldPath): string {
  if (path.length === 0) return prefix === "" ? "(root)" : prefix;
  const rest = formatPath(path);
  if (prefix === "") return rest;
  return rest.startsWith("[") ? `${prefix}${rest}` : `${prefix}.${rest}`;
}

/** A short, safe description of any value for a message: `"x"`, `12`, `null`, `an array`, `an object`. */
export function describeValue(value: unknown): string {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
    case "number":
    case "boolean":
    case "bigint":
      return `${value}`;
    case "undefined":
      return "nothing";
    case "function":
      return "a function";
    case "symbol":
      return "a symbol";
    default:
      if (value === null) return "null";
      return Array.isArray(value) ? `an array (${value.length} items)` : "an object";
  }
}

/** Reads `root` along `path` through own properties only; undefined when any step is missing. */
export function valueAt(root: unknown, path: FieldPath): unknown {
  let current: unknown = root;
  for (const segment of path) {
    if (typeof current !== "object" || current === null || typeof segment === "symbol") return undefined;
    if (!Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current;
}

const ARTICLE: Readonly<Record<string, string>> = {
  int: "an integer",
  number: "a number",
  string: "a string",
  boolean: "a boolean",
  array: "an array",
  object: "an object",
};

function expectation(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "invalid_type":
      return `expected ${(Object.hasOwn(ARTICLE, issue.expected) ? ARTICLE[issue.expected] : undefined) ?? issue.expected}`;
    case "too_small":
      if (issue.origin === "string") return `expected at least ${issue.minimum} character(s)`;
      if (issue.origin === "array") return `expected at least ${issue.minimum} item(s)`;
      return issue.minimum === 0 ? "expected a non-negative number" : `expected a number ≥ ${issue.minimum}`;
    case "too_big":
      if (issue.origin === "string") return `expected at most ${issue.maximum} character(s)`;
      if (issue.origin === "array") return `expected at most ${issue.maximum} item(s)`;
      return `expected a number ≤ ${issue.maximum}`;
    case "invalid_value":
      return `expected ${issue.values.map((v) => describeValue(v)).join(" or ")}`;
    case "invalid_format":
      return issue.format === "regex" ? `expected a value matching ${String(issue.pattern ?? "the pattern")}` : `expected a ${issue.format}`;
    case "invalid_union":
      return "expected one of the allowed shapes";
    default:
      return issue.message;
  }
}

/** The reason for an unknown key, said at the key itself (an `unrecognized_keys` issue is pointed at each key). */
export function unknownField(key: string): string {
  return `unknown field ${JSON.stringify(key)}`;
}

/**
 * The reason part of a message for one zod issue, read against the raw input so it can say what was found:
 * `expected a non-negative integer, got "x"`, `is missing`. Unknown keys are said at each key (`unknownField`).
 */
export function describeIssue(issue: z.core.$ZodIssue, root: unknown): string {
  const parent = valueAt(root, issue.path.slice(0, -1));
  const last = issue.path[issue.path.length - 1];
  const present =
    issue.path.length === 0 ||
    (typeof parent === "object" && parent !== null && last !== undefined && typeof last !== "symbol" && Object.hasOwn(parent, last));
  // A schema may carry its own wording ("expected a non-negative integer", "must start with a letter…"); it
  // beats the generic one. zod's own defaults all start with one of these words.
  const custom = !/^(Invalid|Too (big|small)|Unrecognized)/.test(issue.message);
  let reason = custom ? issue.message : expectation(issue);
  if (!present && issue.code === "invalid_type") return `is missing (${reason})`;
  // zod reports a fractional or unsafe number as a failed "int" type; say so plainly.
  if (custom) return `${reason}, got ${describeValue(valueAt(root, issue.path))}`;
  if (issue.code === "invalid_type" && issue.expected === "int") reason = "expected an integer";
  return `${reason}, got ${describeValue(valueAt(root, issue.path))}`;
}

interface Visit {
  readonly value: unknown;
  readonly key: PropertyKey | undefined;
  readonly parent: Visit | undefined;
}

function pathOf(visit: Visit, last: PropertyKey): FieldPath {
  const path: PropertyKey[] = [last];
  for (let v: Visit | undefined = visit; v !== undefined && v.key !== undefined; v = v.parent) path.push(v.key);
  return path.reverse();
}

/**
 * Finds own `__proto__` keys anywhere in a JSON-like value (zod may drop them silently). Iterative, with parent
 * links instead of copied paths, and linear in the size of the value, so deep or huge input stays cheap. Never
 * stops early: a key it missed would let a workflow vanish without a problem.
 */
export function findProtoKeys(root: unknown): FieldPath[] {
  const found: FieldPath[] = [];
  const stack: Visit[] = [{ value: root, key: undefined, parent: undefined }];
  const seen = new Set<object>();
  while (stack.length > 0) {
    const visit = stack.pop() as Visit;
    const { value } = visit;
    if (typeof value !== "object" || value === null || seen.has(value)) continue;
    seen.add(value);
    const keys: PropertyKey[] = Array.isArray(value) ? Object.keys(value).map(Number) : Object.keys(value);
    for (const key of keys) {
      if (key === "__proto__") found.push(pathOf(visit, key));
      else stack.push({ value: (value as Record<PropertyKey, unknown>)[key], key, parent: visit });
    }
  }
  return found;
}
