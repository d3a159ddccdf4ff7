/** The one check of a commit record: before any store writes it, and when any store reads it back. */
import { workflowError } from "@phasekit/core";
import { commitRecordSchema, type CommitRecord } from "./records.js";
import { damagedRecord, firstIssue, type RecordPlace } from "./record-issue.js";

export type { RecordPlace } from "./record-issue.js";

/**
 * The record, parsed by `commitRecordSchema`; INVALID_OPTIONS naming the store's `file`, the field and its value
 * otherwise, so a record the loader would refuse (or a database would take as anything) is never written.
 */
export function checkCommitRecord(record: unknown, file: string): CommitRecord {
  const checked = commitRecordSchema.safeParse(record);
  if (checked.success) return checked.data;
  const { field, value, text } = firstIssue(record, checked.error);
  const id = (record as { id?: unknown } | null)?.id;
  throw workflowError("checkpoints", "INVALID_OPTIONS", `commit record ${JSON.stringify(id)} in ${file} is invalid: ${text}.`, {
    file,
    field,
    value,
    hint: "pass a message of at most 100,000 characters, a list of non-empty file paths and a sha of 7 to 64 hex digits",
  });
}

/** A commit record as a backend read it, unchecked, with the file (or table) and the place it was read from. */
export interface StoredCommit {
  data: unknown;
  file: string;
  place: RecordPlace;
}

/**
 * The latest commit record per id among `stored` (oldest first). A record that is not one is damage, reported
 * as every reader of a run's history reports it (run-log/format.ts `corrupt`): CORRUPT_FILE naming the file,
 * the place and the field. Skipping it would hide a commit that was intended (and maybe made) from recovery.
 */
export function commitsFrom(stored: Iterable<StoredCommit>): Map<string, CommitRecord> {
  const out = new Map<string, CommitRecord>();
  for (const { data, file, place } of stored) {
    const checked = commitRecordSchema.safeParse(data);
    if (!checked.success) {
      const id = typeof data === "object" && data !== null ? (data as { id?: unknown }).id : undefined;
      throw damagedRecord(`a commit record ${JSON.stringify(id) ?? "without an id"}`, data, file, place, checked.error);
    }
    out.set(checked.data.id, checked.data);
  }
  return out;
}
