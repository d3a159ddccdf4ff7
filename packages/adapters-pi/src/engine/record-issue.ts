/**
 * What a failed schema parse says in an adapter's error: core's `describeSchemaIssue` (the one home of the field
 * notation and the reason's words), for every check here that turns a zod failure into a WorkflowError.
 */
import { describeSchemaIssue, refusalToError, workflowError, type SchemaIssue, type WorkflowError } from "@phasekit/core";
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

/** Where a stored record lies in its history: a byte of a file (fs), a row (PostgreSQL), an entry's position. */
export type RecordPlace = { offset: number } | { row: string } | { entry: number };

/**
 * A record of a run's history that is not what its kind must be (`what`: "a commit record \"c2\"", "a rerun
 * mark"): damage, reported as every reader of a run's history reports it (run-log/format.ts `corrupt`),
 * CORRUPT_FILE naming the file, the place and the field. Never skipped: a skipped record silently changes what
 * the run does (a commit looks never intended, a rerun is not done).
 */
export function damagedRecord(what: string, data: unknown, file: string, place: RecordPlace, error: z.ZodError): WorkflowError {
  const { field, value, text } = firstIssue(data, error);
  const where = "offset" in place ? `at byte ${place.offset}` : "row" in place ? `in row ${JSON.stringify(place.row)}` : `at entry ${place.entry}`;
  return workflowError("checkpoints", "CORRUPT_FILE", `${file} holds ${what} ${where} that is not valid: ${text}.`, {
    file,
    ...place,
    field,
    value,
    hint: "restore the run's history from a backup or move the run aside; phasekit never rewrites it",
  });
}
