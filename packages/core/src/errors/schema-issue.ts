/**
 * What a failed schema parse says in an error: where its first issue points and why. Every check that turns a
 * zod failure into a WorkflowError (core's and the adapters') reads it here, so a wrong field reads the same
 * everywhere: `budgets.turns: expected a number ≥ 0, got -1`, `currentPath[0].phaseIndex: is missing (…)`.
 * The path is written as `formatPath` writes it (the notation of definition problems and state refusals).
 */
import type { z } from "zod";
import { describeIssue, joinPath, unknownField, valueAt, type FieldPath } from "./problems.js";

/** The first issue of a failed parse, ready for an error's message and details. */
export interface SchemaIssue {
  /**
   * Where: `prefix` joined with the issue's path (`budgets.turns`, `files[2]`, `tools.x.stages[1]`); the prefix
   * alone for the input itself, `(root)` without one. An unknown key is pointed at itself (`default.stage`).
   */
  readonly field: string;
  /** Why, read against the input: `expected a number, got "x"`, `is missing (expected a string)`, `unknown field "x"`. */
  readonly reason: string;
  /** `field: reason`, the text an error quotes. */
  readonly text: string;
  /** The value found at `field` in the input (own properties only; undefined when absent or unreadable). */
  readonly value: unknown;
}

/** Anything with zod's issue list: a `z.ZodError` of any schema. */
export interface SchemaFailure {
  readonly issues: readonly z.core.$ZodIssue[];
}

/**
 * The first issue of `failure` (from parsing `input`) as an error says it, with `prefix` naming the input
 * (`"budgets"`, `"facts"`; none for a document read whole). Never throws: an input whose reading throws still
 * gets the field and zod's own message.
 */
export function schemaIssue(failure: SchemaFailure, input: unknown, prefix = ""): SchemaIssue {
  const issue = failure.issues[0];
  if (issue === undefined) return at(prefix, [], "is not valid", input);
  if (issue.code === "unrecognized_keys" && issue.keys.length > 0) {
    // Pointed at the key itself, in the words of a definition problem (`unknown field "x"`); the others follow.
    const [key, ...others] = issue.keys as [string, ...string[]];
    const also = others.length === 0 ? "" : ` (and ${others.map((k) => JSON.stringify(k)).join(", ")})`;
    return at(prefix, [...issue.path, key], `${unknownField(key)}${also}`, input);
  }
  let reason: string;
  try {
    reason = describeIssue(issue, input);
  } catch {
    // Only an exotic input (a throwing getter, a revoked Proxy) gets here: zod's words still say why.
    reason = issue.message;
  }
  return at(prefix, issue.path, reason, input);
}

function at(prefix: string, path: FieldPath, reason: string, input: unknown): SchemaIssue {
  const field = joinPath(prefix, path);
  let value: unknown;
  try {
    value = valueAt(input, path);
  } catch {
    value = undefined;
  }
  return { field, reason, text: `${field}: ${reason}`, value };
}
