/**
 * The per-workflow checks of compileDefinitions: key, shape (zod), and structure (phases, ids, tools, profiles,
 * references, command names). Each returns problems; none decides what gets removed.
 */
import type { z } from "zod";
import {
  COMMAND_NAME_PATTERN,
  PhaseDefinitionSchema,
  ProfileSchema,
  SubworkflowRefSchema,
  ToolRulesSchema,
  WorkflowDefinitionSchema,
} from "./schema.js";
import type { WorkflowDefinition } from "./schema.js";
import { describeIssue, describeValue, findProtoKeys, joinPath, unknownField, valueAt } from "../errors/problems.js";
import type { DefinitionCode, DefinitionProblem, FieldPath } from "../errors/problems.js";
import { asObject } from "./raw.js";
import type { RawWorkflowView } from "./raw.js";

/**
 * The one key refused: `__proto__` cannot be an own key of a plain object (JSON, YAML and zod drop or
 * rewire it), so no document could name it. Other Object.prototype names are plain keys here (Maps only).
 */
const RESERVED_KEYS: ReadonlySet<string> = new Set(["__proto__"]);

/** Builds one problem for workflow `key` at `path` (relative to the workflow). */
export function problemAt(code: DefinitionCode, key: string, path: FieldPath, reason: string, hint: string): DefinitionProblem {
  const where = joinPath(joinPath("", [key]), path);
  return { code, path: where, message: `${where}: ${reason}`, hint, workflowKey: key };
}

/** The workflow key itself: the pattern, and no prototype-machinery names. */
export function keyProblems(key: string): DefinitionProblem[] {
  if (RESERVED_KEYS.has(key)) {
    return [problemAt("INVALID_DEFINITION", key, [], `the workflow key ${describeValue(key)} is reserved`, "rename the workflow")];
  }
  // A key is a folder name: any non-empty text (pi-workflows loads a folder named " " too).
  if (key === "") {
    const reason = "the workflow key is empty";
    return [problemAt("INVALID_DEFINITION", key, [], reason, "rename the workflow")];
  }
  return [];
}

function shapeKeys(schema: { shape: Record<string, unknown> }): string {
  return Object.keys(schema.shape).join(", ");
}

/** The fields allowed at `path` inside a definition, for the hint of an unknown-field problem. */
function knownFields(def: unknown, path: FieldPath): string {
  const [first, , third] = path;
  if (path.length === 0) return shapeKeys(WorkflowDefinitionSchema);
  if (first === "profiles") return shapeKeys(ProfileSchema);
  if (first === "phases" && third === "tools") return shapeKeys(ToolRulesSchema);
  const entry = asObject(valueAt(def, path));
  return entry !== undefined && Object.hasOwn(entry, "subworkflow") ? shapeKeys(SubworkflowRefSchema) : shapeKeys(PhaseDefinitionSchema);
}

function issueProblems(key: string, def: unknown, issue: z.core.$ZodIssue, base: FieldPath = []): DefinitionProblem[] {
  const path = [...base, ...issue.path];
  if (issue.code === "unrecognized_keys") {
    // `__proto__` is reported by findProtoKeys, whatever zod does with it.
    return issue.keys
      .filter((k) => k !== "__proto__")
      .map((k) => problemAt("INVALID_DEFINITION", key, [...path, k], unknownField(k), `remove it or use one of: ${knownFields(def, path)}`));
  }
  const phaseIndex = path.length === 2 && path[0] === "phases" ? path[1] : undefined;
  if (issue.code === "invalid_union" && typeof phaseIndex === "number") return phaseEntryProblems(key, def, phaseIndex);
  const hint = "fix the value (see the definition reference in docs/core.md)";
  return [problemAt("INVALID_DEFINITION", key, path, describeIssue(issue, valueAt(def, base)), hint)];
}

/** A phase entry that matched neither shape: re-check it against the shape it was meant to have. */
function phaseEntryProblems(key: string, def: unknown, index: number): DefinitionProblem[] {
  const base: FieldPath = ["phases", index];
  const entry = valueAt(def, base);
  const obj = asObject(entry);
  if (obj === undefined) {
    const reason = `expected a phase object or a { "subworkflow": key } reference, got ${describeValue(entry)}`;
    return [problemAt("INVALID_DEFINITION", key, base, reason, "write the phase as an object")];
  }
  const schema = Object.hasOwn(obj, "subworkflow") ? SubworkflowRefSchema : PhaseDefinitionSchema;
  const parsed = schema.safeParse(obj);
  if (parsed.success) return [];
  return parsed.error.issues.flatMap((issue) => issueProblems(key, def, issue, base));
}

/** Shape problems (zod, plus own `__proto__` keys zod may drop) and the parsed definition when there are none. */
export function shapeProblems(key: string, def: unknown): { problems: DefinitionProblem[]; parsed: WorkflowDefinition | undefined } {
  const problems = findProtoKeys(def).map((path) =>
    problemAt("INVALID_DEFINITION", key, path, 'the key "__proto__" is not allowed', "remove the key"),
  );
  const parsed = WorkflowDefinitionSchema.safeParse(def);
  if (!parsed.success) problems.push(...parsed.error.issues.flatMap((issue) => issueProblems(key, def, issue)));
  return { problems, parsed: parsed.success && problems.length === 0 ? parsed.data : undefined };
}

/** Suggests a command name for a key that is not one: `codeReview` → `code-review`. */
function suggestCommand(key: string): string {
  const kebab = key
    .replace(/([a-z0-9])([A-Z])/g, "$1-$2")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return COMMAND_NAME_PATTERN.test(kebab) ? kebab : "my-workflow";
}

/** The `/command` a workflow is started with: its `commandName`, else its key when that is a valid name. */
export function resolvedCommand(key: string, view: RawWorkflowView): string | undefined {
  const name = view.commandName ?? key;
  return COMMAND_NAME_PATTERN.test(name) ? name : undefined;
}

function commandProblems(key: string, view: RawWorkflowView): DefinitionProblem[] {
  const hintFor = `use lowercase words joined by single hyphens, e.g. "${suggestCommand(view.commandName ?? key)}"`;
  // A hidden workflow has no command, so its commandName is never used (pi-workflows leaves it "" there).
  if (view.commandName !== undefined && view.show && !COMMAND_NAME_PATTERN.test(view.commandName)) {
    const reason = `${describeValue(view.commandName)} is not a valid command name`;
    return [problemAt("INVALID_COMMAND_NAME", key, ["commandName"], reason, hintFor)];
  }
  if (view.commandName === undefined && view.show && !COMMAND_NAME_PATTERN.test(key)) {
    const reason = `the workflow is shown but its key ${describeValue(key)} is not a valid command name and no commandName is set`;
    return [problemAt("INVALID_COMMAND_NAME", key, ["commandName"], reason, `set "commandName": "${suggestCommand(key)}", or "show": false`)];
  }
  return [];
}

function phaseProblems(key: string, view: RawWorkflowView, exists: (key: string) => boolean): DefinitionProblem[] {
  const problems: DefinitionProblem[] = [];
  const firstIndexOfId = new Map<string, number>();
  for (const phase of view.phases ?? []) {
    const at: FieldPath = ["phases", phase.index];
    if (phase.id !== undefined && phase.ref === undefined) {
      const first = firstIndexOfId.get(phase.id);
      if (first === undefined) firstIndexOfId.set(phase.id, phase.index);
      else {
        const reason = `phase id ${describeValue(phase.id)} is already used by phases[${first}]`;
        problems.push(problemAt("DUPLICATE_PHASE_ID", key, [...at, "id"], reason, "give every phase of a workflow its own id"));
      }
    }
    if (phase.hasWhitelist && phase.hasBlacklist) {
      const reason = "sets both tools.whitelist and tools.blacklist";
      problems.push(problemAt("TOOL_LISTS_CONFLICT", key, [...at, "tools"], reason, "keep one of the two lists"));
    }
    // pi-workflows has no workflow-level profile list: names are free unless the workflow declares one.
    for (const { index: i, name } of view.declaresProfiles ? phase.availableProfiles : []) {
      if (view.profileNames.has(name)) continue;
      const reason = `profile ${describeValue(name)} is not among the workflow's profiles`;
      const hint = `add { "name": ${JSON.stringify(name)} } to profiles, or remove it here`;
      problems.push(problemAt("UNKNOWN_PROFILE", key, [...at, "availableProfiles", i], reason, hint));
    }
    if (phase.ref !== undefined && !exists(phase.ref)) {
      const reason = `workflow ${describeValue(phase.ref)} does not exist`;
      problems.push(problemAt("DANGLING_REFERENCE", key, [...at, "subworkflow"], reason, "define that workflow or fix the key"));
    }
  }
  return problems;
}

/** Structure problems of one workflow that need no other workflow's health: phases, ids, tools, profiles, refs. */
export function structureProblems(key: string, view: RawWorkflowView, exists: (key: string) => boolean): DefinitionProblem[] {
  const problems: DefinitionProblem[] = [];
  if (view.phases !== undefined && view.phases.length === 0) {
    problems.push(problemAt("EMPTY_PHASES", key, ["phases"], "has no phases", "add at least one phase, or remove the workflow"));
  }
  problems.push(...phaseProblems(key, view, exists), ...commandProblems(key, view));
  return problems;
}
