/**
 * What a holder leaves behind when it closes, so that the history folder grows with change, not with the number
 * of acquisitions (docs/decisions.md, D14 "Closing").
 *
 * - An acquisition that wrote nothing (a refused call, a reader that took the lock) removes its own segment: the
 *   history is then exactly what it was before the claim. While it held the run, its segment fenced every
 *   earlier holder; once it is gone, an earlier holder frozen across the whole hold may acknowledge again, which
 *   is the history in which this claim never happened (it wrote nothing anyone could contradict).
 * - A holder whose claim found FOLD_AT_SEGMENTS segments or more, or whose own segment grew past FOLD_AT_BYTES
 *   (a quarter of that if it compacted, so its segment holds a second copy of what the snapshot holds), folds: it compacts (snapshot, `base` record synced and fenced, lower segments deleted), then continues the
 *   history in the very next epoch, whose head starts at that snapshot and pins nothing, syncs and fences that
 *   head, and only then deletes its own segment and whatever else the snapshot superseded. A compaction alone
 *   cannot delete its holder's own segment (every value the snapshot copied stays there twice); the next epoch's
 *   head makes that segment unused. That claim takes exactly the next epoch or none (claim.ts `only`), so it
 *   never fences off a runner that claimed meanwhile; the deletions follow the same fence as a compaction's.
 */
import { fstatSync, lstatSync, unlinkSync } from "node:fs";
import { claimRunLog, type Claim } from "./claim.js";
import { compactRunLog, removeSuperseded } from "./compaction.js";
import type { LogParts } from "./log-parts.js";
import type { StateKeeper } from "./state-keeper.js";
import { ValueFiles } from "./values.js";

/** Segments found at claim from which the holder folds the history when it closes. */
export const FOLD_AT_SEGMENTS = 4;
/** A segment past this size is folded when its holder closes the log (later opens then read a snapshot's index). */
export const FOLD_AT_BYTES = 4 * 1024 * 1024;

/** Settles the history at close (see the module comment); the caller closes the files afterwards. */
export async function settleAtClose(parts: LogParts, states: StateKeeper): Promise<void> {
  const { writer, claimed } = parts;
  if (writer.size === claimed.headBytes && !claimed.imported) {
    removeOwnSegment(parts);
    return;
  }
  if (writer.lost !== undefined) return;
  // A holder that compacted keeps every value its snapshot copied in its own segment until it folds: past
  // 1 MiB, that second copy is worth removing now rather than at the next fold.
  const compactedLong = parts.snapshots > 0 && writer.size > FOLD_AT_BYTES / 4;
  if (writer.size > FOLD_AT_BYTES || compactedLong || claimed.segmentsBefore >= FOLD_AT_SEGMENTS) await foldRunLog(parts, states);
}

/** Compacts, continues in the next epoch, and removes what that left unused (see the module comment). */
export async function foldRunLog(parts: LogParts, states: StateKeeper): Promise<void> {
  const { snapshot } = await compactRunLog(parts, states);
  const values = new ValueFiles();
  let next: Claim | undefined;
  try {
    next = await claimRunLog(parts.runDir, parts.boundary, values, parts.epoch + 1);
    // Bytes after our base would be pinned by the new head; nothing is appended at close, but never assume it.
    if (next.head.base !== snapshot || next.head.pins.length > 0) return;
    next.writer.sync();
    next.writer.fence();
    await removeSuperseded({ ...parts, epoch: next.epoch, writer: next.writer }, snapshot);
  } finally {
    values.close();
    await next?.writer.handle.close().catch(() => undefined);
  }
}

// Only if the name still leads to the file this holder wrote (never a file planted under its name).
function removeOwnSegment(parts: LogParts): void {
  const { writer } = parts;
  const own = fstatSync(writer.handle.fd);
  const named = lstatSync(writer.file, { throwIfNoEntry: false });
  if (named === undefined || !named.isFile() || named.ino !== own.ino || named.dev !== own.dev) return;
  parts.boundary("unlink(own empty segment)");
  unlinkSync(writer.file);
}
