/**
 * What a failed schema parse says in an adapter's error: core's `describeSchemaIssue` (the one home of the field
 * notation and the reason's words), for every check here that turns a zod failure into a WorkflowError.
 */
import { describeSchemaIssue, refusalToError, type SchemaIssue } from "@phasekit/core";
import type { z } from "zod";

/**
 * The first issue of `error` (from parsing `input`): `field` (`prefix` joined with the issue's path, `(root)`
 * without either), `reason`, `text` (`field: reason`) and the value there.
 */
export function schemaIssue(error: z.ZodError, input: unknown, prefix?: string): SchemaIssue {
  const described = describeSchemaIssue(error, input, prefix);
  // Core refuses only a failure without an issue list; every caller passes zod's own error.
  if (!described.ok) throw refusalToError(described.error);
  return described.issue;
}

/** `schemaIssue` of a stored record, its value shortened for an error's details (a string to 80 characters, an object or array by its kind). */
export function firstIssue(record: unknown, error: z.ZodError): SchemaIssue {
  const issue = schemaIssue(error, record);
  const { value } = issue;
  return { ...issue, value: typeof value === "string" ? value.slice(0, 80) : typeof value === "object" && value !== null ? (Array.isArray(value) ? "array" : "object") : value };
}
