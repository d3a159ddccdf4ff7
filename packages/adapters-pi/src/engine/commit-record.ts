/** The one check of a commit record before any store writes it (the fs run log and PostgreSQL alike). */
import { workflowError } from "@phasekit/core";
import { commitRecordSchema, type CommitRecord } from "./records.js";

/**
 * The record, parsed by `commitRecordSchema`; INVALID_OPTIONS naming the store's `file`, the field and its value
 * otherwise, so a record the loader would refuse (or a database would take as anything) is never written.
 */
export function checkCommitRecord(record: unknown, file: string): CommitRecord {
  const checked = commitRecordSchema.safeParse(record);
  if (checked.success) return checked.data;
  const issue = checked.error.issues[0];
  const where = issue?.path ?? [];
  const field = where.join(".") || "$";
  let value: unknown = record;
  for (const key of where) value = (value as Record<PropertyKey, unknown> | null | undefined)?.[key];
  const id = (record as { id?: unknown } | null)?.id;
  throw workflowError("checkpoints", "INVALID_OPTIONS", `commit record ${JSON.stringify(id)} in ${file}: field ${field} is invalid (${issue?.message ?? "invalid record"}).`, {
    file,
    field,
    value: typeof value === "string" ? value.slice(0, 80) : typeof value === "object" && value !== null ? (Array.isArray(value) ? "array" : "object") : value,
    hint: "pass a message of at most 100,000 characters, a list of non-empty file paths and a sha of 7 to 64 hex digits",
  });
}
