/**
 * The record shapes of a run's steps and commit intents (shared by every backend), and the reader of the
 * earlier on-disk format `<runDir>/checkpoints.ndjson`, which phasekit no longer writes: a run of that format is
 * read here and folded into its run log on first claim (run-log/legacy.ts). The log is folded on load into the
 * latest record per step id and per commit id; a torn last line is dropped; a bad line anywhere else is
 * CORRUPT_FILE, and the file is left as it is.
 */
import { z } from "zod";
import { workflowError, type Result, type WorkflowError } from "@phasekit/core";
import type { FsPort } from "../io/fs-port.js";
import { MAX_FILE_BYTES, readRegular } from "../io/safe-open.js";
import { commitRecordSchema, stepRecordSchema, type CommitRecord, type StepRecord } from "../engine/records.js";
import { schemaIssue } from "../engine/record-issue.js";

const SCOPE = "checkpoints";
/** File name of the checkpoint log inside a run folder. */
export const CHECKPOINT_LOG_FILE = "checkpoints.ndjson";

/** A line of the log. */
export const checkpointLogRecordSchema = z.discriminatedUnion("kind", [stepRecordSchema, commitRecordSchema]);

/** Any record of the log. */
export type CheckpointLogRecord = z.infer<typeof checkpointLogRecordSchema>;

/** The log folded: the latest record per key, how many lines it had, and where its valid bytes end. */
export interface FoldedLog {
  steps: Map<string, StepRecord>;
  commits: Map<string, CommitRecord>;
  lines: number;
  /** Byte length of the valid prefix; anything after it is a torn tail. */
  validBytes: number;
  tornBytes: number;
}

/** Parses and folds log text (from `file`, named in errors). */
export function foldLog(file: string, bytes: Uint8Array): Result<{ log: FoldedLog }> {
  const log: FoldedLog = { steps: new Map(), commits: new Map(), lines: 0, validBytes: 0, tornBytes: 0 };
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = 0;
  let lineNo = 0;
  while (offset < buf.length) {
    const nl = buf.indexOf(0x0a, offset);
    const end = nl < 0 ? buf.length : nl;
    lineNo++;
    const record = parseRecord(buf.toString("utf8", offset, end));
    if (!record.ok) {
      // Only an unterminated last line can be a torn append; a complete line that does not parse was written
      // whole (by a newer version, or damaged later) and must not be cut away.
      if (nl < 0) {
        log.tornBytes = buf.length - offset;
        break;
      }
      const error = workflowError(SCOPE, "CORRUPT_FILE", `${file} is corrupt at line ${lineNo} (byte ${offset}): ${record.why}. The file was left untouched.`, {
        file,
        line: lineNo,
        offset,
        hint: "inspect the line by hand; remove the file to run every step again",
      });
      return { ok: false, error };
    }
    if (nl < 0) {
      // A complete record without its newline is still a torn append: the next append would glue onto it.
      log.tornBytes = buf.length - offset;
      break;
    }
    apply(log, record.record);
    log.lines++;
    offset = nl + 1;
    log.validBytes = offset;
  }
  return { ok: true, log };
}

function parseRecord(line: string): { ok: true; record: CheckpointLogRecord } | { ok: false; why: string } {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch (error) {
    return { ok: false, why: `not JSON (${error instanceof Error ? error.message : String(error)})` };
  }
  const r = checkpointLogRecordSchema.safeParse(json);
  if (r.success) return { ok: true, record: r.data };
  return { ok: false, why: schemaIssue(r.error, json).text };
}

/** Folds one record into the latest-per-key maps. */
export function apply(log: FoldedLog, record: CheckpointLogRecord): void {
  if (record.kind === "step") log.steps.set(record.stepId, record);
  else log.commits.set(record.id, record);
}

/** Reads and folds the log; a missing file is an empty log. */
export async function readLog(fs: FsPort, file: string): Promise<Result<{ log: FoldedLog }>> {
  let bytes: Buffer | null;
  try {
    bytes = await readRegular(fs, file, { maxBytes: MAX_FILE_BYTES.log, scope: SCOPE });
  } catch (error) {
    return { ok: false, error: error as WorkflowError };
  }
  if (bytes === null) return { ok: true, log: { steps: new Map(), commits: new Map(), lines: 0, validBytes: 0, tornBytes: 0 } };
  return foldLog(file, bytes);
}
