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
import { MAX_STEP_ERROR_CHARS } from "./step-error.js";

const SCOPE = "checkpoints";
/** File name of the checkpoint log inside a run folder. */
export const CHECKPOINT_LOG_FILE = "checkpoints.ndjson";

const fingerprintSchema = z.string().regex(/^v1:sha256:[0-9a-f]{64}$/);
const time = z.iso.datetime({ offset: true });

/** One step's checkpoint record (format version 1). */
export const stepRecordSchema = z.strictObject({
  v: z.literal(1),
  kind: z.literal("step"),
  stepId: z.string().min(1).max(128),
  status: z.enum(["started", "completed", "failed"]),
  attempt: z.int().min(1),
  inputFingerprint: fingerprintSchema,
  outputFingerprint: fingerprintSchema.optional(),
  artifact: z.string().regex(/^artifacts\/[0-9a-f]{64}\.json$/).optional(),
  startedAt: time,
  finishedAt: time.optional(),
  error: z.string().max(MAX_STEP_ERROR_CHARS).optional(),
  /** Set by the store that read the record: a rerun mark written after it names this step (reuse-decision.ts). */
  superseded: z.literal(true).optional(),
});

/** A commit intent (seed 003): recorded before `git commit`, marked committed after it. */
export const commitRecordSchema = z.strictObject({
  v: z.literal(1),
  kind: z.literal("commit"),
  id: z.string().min(1).max(128),
  status: z.enum(["intended", "committed"]),
  message: z.string().max(100_000),
  files: z.array(z.string().min(1).max(4096)).max(100_000),
  stepId: z.string().min(1).max(128).optional(),
  sha: z.string().regex(/^[0-9a-f]{7,64}$/).optional(),
  intendedAt: time,
  committedAt: time.optional(),
});

/** A line of the log. */
export const checkpointLogRecordSchema = z.discriminatedUnion("kind", [stepRecordSchema, commitRecordSchema]);

/** A step's checkpoint record. */
export type StepRecord = z.infer<typeof stepRecordSchema>;
/** A commit intent record. */
export type CommitRecord = z.infer<typeof commitRecordSchema>;
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
  const issue = r.error.issues[0];
  return { ok: false, why: `${["$", ...(issue?.path ?? []).map(String)].join(".")}: ${issue?.message ?? "invalid record"}` };
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
