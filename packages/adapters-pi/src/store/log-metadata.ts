/**
 * workflow.json as a view of the run log. A holder records each metadata generation in its fenced run log
 * first and only then writes the file, so a displaced holder's late write either never reaches the file (its
 * log append is refused with LOCK_LOST) or lands with a generation the log already superseded. Readers take
 * the log's generation when it is at least the file's: a file left behind by a late rename never decides.
 * A file whose generation is newer than the log's was written by a writer without the log (an older phasekit,
 * a lockless tool): it is the later fact, and wins.
 */
import path from "node:path";
import { isWorkflowError, workflowError, type Result, type WorkflowError } from "@phasekit/core";
import { writeFileAtomic } from "../io/atomic-write.js";
import type { FsPort } from "../io/fs-port.js";
import type { JsonValue } from "../io/plain-json.js";
import { buildDocument, readWorkflowMetadata, serializeWorkflowMetadata, validateMetadata, type ReadMetadataResult } from "./metadata.js";
import type { WorkflowMetadata, WorkflowMetadataInput } from "./metadata-schema.js";
import { RUN_LOG_DIR } from "./run-log/format.js";
import { readRunLog } from "./run-log/reader.js";
import type { RunLog } from "./run-log/run-log.js";

/**
 * The metadata of the run whose workflow.json is `file`, as its history says (what `list`, `gc` and a store
 * without the lock decide from): read without claiming anything; the file alone decides only for a run with
 * no history.
 */
export async function readRunMetadata(file: string, fs: FsPort): Promise<ReadMetadataResult> {
  const view = await readRunLog(path.dirname(file));
  try {
    return await readMetadataWithLog(file, fs, view?.state());
  } finally {
    view?.close();
  }
}

/**
 * Re-renders workflow.json from the history when the file disagrees with it; called by every claim, so a late
 * rename by a displaced holder (an older generation) or a refresh a crash cut off never outlives the next
 * acquisition. Left alone: a damaged file (evidence, a human decides) and a file newer than the history (a
 * lockless writer's later fact, see the module comment). Returns whether the file was rewritten.
 */
export async function renderMetadataView(log: RunLog, file: string, fs: FsPort): Promise<boolean> {
  const logged = log.state();
  if (logged === undefined) return false;
  const fromLog = validateMetadata(path.join(path.dirname(file), RUN_LOG_DIR), logged);
  if (!fromLog.ok) return false;
  const fromFile = await readWorkflowMetadata(file, { fs });
  if (!fromFile.ok) return false;
  const text = serializeWorkflowMetadata(fromLog.metadata);
  if (fromFile.metadata !== null) {
    if (fromFile.metadata.generation > fromLog.metadata.generation) return false;
    if (serializeWorkflowMetadata(fromFile.metadata) === text) return false;
  }
  await writeFileAtomic(file, text, { fs });
  return true;
}

/** The newer of workflow.json and the metadata recorded in the run log (`logged`: the log's latest state). */
export async function readMetadataWithLog(file: string, fs: FsPort, logged: JsonValue | undefined): Promise<ReadMetadataResult> {
  const fromFile = await readWorkflowMetadata(file, { fs });
  // A damaged file is evidence and stops the run, whatever the log holds: a human decides.
  if (!fromFile.ok || logged === undefined) return fromFile;
  const fromLog = validateMetadata(path.join(path.dirname(file), RUN_LOG_DIR), logged);
  if (!fromLog.ok) return fromLog;
  const f = fromFile.metadata;
  return f !== null && f.generation > fromLog.metadata.generation ? fromFile : { ok: true, metadata: fromLog.metadata };
}

/** Outcome of `writeMetadataWithLog`: the committed metadata, and the file's own error if only it failed. */
export type LoggedWrite = Result<{ metadata: WorkflowMetadata; snapshotError?: WorkflowError }>;

/**
 * Compare-and-set against what readers see, commit to the log (one fenced, synced append), then refresh
 * workflow.json. A file write that fails after the commit does not undo it: it comes back as `snapshotError`.
 */
export async function writeMetadataWithLog(log: RunLog, file: string, fs: FsPort, next: WorkflowMetadataInput, expectedGeneration: number | null): Promise<LoggedWrite> {
  const current = await readMetadataWithLog(file, fs, log.state());
  if (!current.ok) return current;
  const found = current.metadata?.generation ?? null;
  if (found !== expectedGeneration) return { ok: false, error: staleError(file, expectedGeneration, found) };
  const built = buildDocument(file, next, (expectedGeneration ?? 0) + 1);
  if (!built.ok) return built;
  await log.putState(built.metadata as unknown as JsonValue);
  try {
    await writeFileAtomic(file, built.text, { fs });
  } catch (error) {
    const snapshotError = isWorkflowError(error)
      ? error
      : workflowError("workflow.json", "WRITE_FAILED", `refreshing ${file} from the run log failed: ${String(error)}`, { file, hint: "the run log holds the metadata; the next write refreshes the file" }, error);
    return { ok: true, metadata: built.metadata, snapshotError };
  }
  return { ok: true, metadata: built.metadata };
}

function staleError(file: string, expected: number | null, found: number | null): WorkflowError {
  const what = found === null ? "does not exist" : `is at generation ${found}`;
  return workflowError("workflow.json", "STALE_GENERATION", `refusing to write ${file}: expected generation ${String(expected)}, but the run ${what}.`, {
    file,
    field: "generation",
    value: found,
    expected,
    hint: "another writer changed the run: re-read workflow.json (and re-acquire the lock) before writing",
  });
}
