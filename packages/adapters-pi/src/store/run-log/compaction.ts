/**
 * Compaction never renames over a live file. It writes a new snapshot (a fresh name, O_EXCL), syncs it, and
 * appends a `base` record to the holder's own segment: from then on every reader starts at the snapshot. Only
 * after that record is synced AND the fence shows no newer epoch does it delete anything, and then only files of
 * epochs up to its own that the new history does not use. A newer holder that claims after that check read the
 * `base` record (it was written before), so it needs none of the deleted files; one that claimed before it
 * makes the check fail, and nothing is deleted.
 */
import path from "node:path";
import { workflowError } from "@phasekit/core";
import { nodeFs, type FsFileHandle } from "../../io/fs-port.js";
import { isAlreadyExists, openRegular, syncRealDir } from "../../io/safe-open.js";
import { RealDir } from "../../io/safe-open-sync.js";
import { encodeLine } from "./format.js";
import { artifactId, RUN_ARTIFACTS_DIR, segmentEpoch, snapshotId, snapshotName } from "./file-names.js";
import { batches, planSnapshot, type PlannedItem, type SnapshotChunk } from "./snapshot-layout.js";
import { loadSnapshot } from "./read-chain.js";
import type { LogParts } from "./log-parts.js";
import { snapshotStepItems } from "./snapshot-outputs.js";
import { timelineItems } from "./archive.js";
import type { StateKeeper } from "./state-keeper.js";

/** What a compaction did. */
export interface CompactionReport {
  snapshot: string;
  recordsBefore: number;
  recordsAfter: number;
  segmentsRemoved: number;
  snapshotsRemoved: number;
  artifactsRemoved: number;
}

/** Compacts the run log (see the module comment); appends wait meanwhile. */
export function compactRunLog(parts: LogParts, states: StateKeeper): Promise<CompactionReport> {
  return parts.writer.exclusive(async () => {
    parts.writer.fence();
    const recordsBefore = parts.index.records;
    const { index, payloads } = planSnapshot(parts.epoch, snapshotItems(parts, states));
    const { name, file } = await writeSnapshot(parts, [index, ...payloads]);
    // The switch: one synced line in our own segment, then the fence (LOCK_LOST: nothing below happens).
    parts.writer.writeAll(encodeLine({ t: "base", e: parts.epoch, snap: name }));
    parts.writer.sync();
    parts.writer.fence();
    const fresh = await loadSnapshot(parts.dir, name, parts.values);
    Object.assign(parts.index, fresh);
    parts.values.retain(new Set([parts.writer.file, file]));
    const removed = await removeSuperseded(parts, name);
    return { snapshot: name, recordsBefore, recordsAfter: fresh.records, ...removed };
  });
}

function snapshotItems(parts: LogParts, states: StateKeeper): PlannedItem[] {
  const out: PlannedItem[] = [];
  // Steps first: their payloads must lie one after the other, in this order (snapshot-outputs.ts).
  out.push(...snapshotStepItems(parts));
  // The latest state must rebuild (CORRUPT_FILE otherwise, before anything is written); every generation is
  // carried forward (D17): the older ones in the snapshot's archive, the latest chain and the events after it as
  // lines of their own (archive.ts).
  states.current();
  out.push(...timelineItems(parts));
  return out;
}


async function writeSnapshot(parts: LogParts, bytes: readonly SnapshotChunk[]): Promise<{ name: string; file: string }> {
  for (;;) {
    const name = snapshotName(parts.epoch, ++parts.snapshots);
    const file = path.join(parts.dir, name);
    parts.boundary("open(snapshot)");
    const h = await openRegular(nodeFs, file, "create", "run-log").then(
      (opened) => (opened as { handle: FsFileHandle }).handle,
      (error: unknown) => {
        if (isAlreadyExists(error)) return undefined;
        throw error;
      },
    );
    if (h === undefined) continue;
    try {
      for (const chunk of batches(bytes)) {
        let done = 0;
        while (done < chunk.length) {
          parts.boundary("write(snapshot)");
          done += (await h.write(chunk, done, chunk.length - done, null)).bytesWritten;
        }
      }
      parts.boundary("fdatasync(snapshot)");
      await h.datasync();
    } finally {
      await h.close();
    }
    parts.boundary("fsync(runlog folder)");
    await syncRealDir(nodeFs, parts.dir, "run-log");
    return { name, file };
  }
}

/**
 * Deletes what the history starting at snapshot `keep` no longer uses: segments below `parts.epoch`, other
 * snapshots up to it, and unreferenced artifacts up to it (see the module comment for when this is safe).
 * Deletes through each folder's descriptor (io/safe-open-sync.ts RealDir): `runlog/` or `artifacts/` swapped for
 * a symlink (to another run's folder, say) is UNSAFE_FILE naming it, and nothing there is listed or deleted.
 */
export async function removeSuperseded(parts: LogParts, keep: string): Promise<{ segmentsRemoved: number; snapshotsRemoved: number; artifactsRemoved: number }> {
  let segmentsRemoved = 0;
  let snapshotsRemoved = 0;
  let artifactsRemoved = 0;
  const unlink = (dir: RealDir, name: string): void => {
    parts.boundary("unlink");
    dir.unlink(name);
  };
  // Refused before anything is deleted: a swapped artifacts/ must not leave the log half cleaned either.
  const artifacts = RealDir.open(path.join(parts.runDir, RUN_ARTIFACTS_DIR), "run-log");
  try {
    const runlog = RealDir.open(parts.dir, "run-log");
    if (runlog === null) throw realDirGone(parts.dir);
    try {
      for (const name of runlog.list()) {
        const seg = segmentEpoch(name);
        const snap = snapshotId(name);
        if (seg !== undefined && seg < parts.epoch) {
          unlink(runlog, name);
          segmentsRemoved++;
        } else if (snap !== undefined && snap.epoch <= parts.epoch && name !== keep) {
          unlink(runlog, name);
          snapshotsRemoved++;
        }
      }
    } finally {
      runlog.close();
    }
    const referenced = new Set<string>();
    for (const s of parts.index.steps.values()) if (s.artifact !== undefined) referenced.add(path.basename(s.artifact));
    for (const name of artifacts?.list() ?? []) {
      const id = artifactId(name);
      // Epoch 0 is the legacy layout (`<sha256>.json`): left to the old store's own retention.
      if (id === undefined || id.epoch === 0 || id.epoch > parts.epoch || referenced.has(name)) continue;
      unlink(artifacts as RealDir, name);
      artifactsRemoved++;
    }
  } finally {
    artifacts?.close();
  }
  return { segmentsRemoved, snapshotsRemoved, artifactsRemoved };
}

function realDirGone(dir: string): Error {
  return workflowError("run-log", "READ_FAILED", `${dir} is gone while its holder compacts it; nothing was deleted.`, { file: dir, hint: "something removed the run's history folder: restore it from a backup" });
}
