/**
 * Migration: a run folder written before the run log (`checkpoints.ndjson` + `artifacts/<sha256>.json`) opens
 * and continues. On the first claim of a run with no run-log history, its checkpoint log is folded (by the
 * old reader, torn tail ignored) into a snapshot that the new head takes as its base; completed steps keep
 * pointing at their legacy artifacts, which the run log reads and never deletes (epoch 0). The old files are
 * left as they were. Commit intents are not carried over (the run log has no such record).
 */
import path from "node:path";
import { type StepRecord } from "../../engine/records.js";
import { CHECKPOINT_LOG_FILE, readLog } from "../checkpoint-log.js";
import { nodeFs, type FsFileHandle } from "../../io/fs-port.js";
import { openRegular, syncRealDir } from "../../io/safe-open.js";
import { type RunLogRecord } from "./format.js";
import { snapshotName } from "./file-names.js";
import { batches, layoutSnapshot } from "./snapshot-layout.js";
import type { FsBoundary } from "./segment-writer.js";

/** Writes the snapshot of a legacy checkpoint log, if the run has one with records; returns its name or null. */
export async function importLegacy(runDir: string, dir: string, epoch: number, boundary: FsBoundary): Promise<string | null> {
  const r = await readLog(nodeFs, path.join(runDir, CHECKPOINT_LOG_FILE));
  if (!r.ok) throw r.error;
  if (r.log.steps.size === 0) return null;
  const bytes = layoutSnapshot(epoch, [...r.log.steps.values()].map((s) => ({ header: recordOf(s) })));
  const name = snapshotName(epoch, 0);
  boundary("open(snapshot)");
  const { handle: h } = (await openRegular(nodeFs, path.join(dir, name), "create", "run-log")) as { handle: FsFileHandle };
  try {
    for (const chunk of batches(bytes)) {
      let done = 0;
      while (done < chunk.length) {
        boundary("write(snapshot)");
        done += (await h.write(chunk, done, chunk.length - done, null)).bytesWritten;
      }
    }
    boundary("fdatasync(snapshot)");
    await h.datasync();
  } finally {
    await h.close();
  }
  boundary("fsync(runlog folder)");
  await syncRealDir(nodeFs, dir, "run-log");
  return name;
}

function recordOf(s: StepRecord): RunLogRecord {
  const base = { e: 0, k: s.stepId, in: s.inputFingerprint, a: s.attempt };
  if (s.status === "started") return { t: "start", ...base };
  if (s.status === "failed") return { t: "fail", ...base, err: s.error ?? "" };
  // A completed record without an artifact cannot be reused anyway: keep it as started, so the step reruns.
  if (s.outputFingerprint === undefined || s.artifact === undefined) return { t: "start", ...base };
  return { t: "done", ...base, ofp: s.outputFingerprint, art: s.artifact };
}
