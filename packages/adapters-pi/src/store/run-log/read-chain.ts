/**
 * Reading a run log: find the head (the newest segment whose first line is a valid `head`), then fold exactly
 * what it accepted: its base snapshot, the pinned byte ranges of earlier segments, and its own complete lines.
 * Bytes of an earlier segment past its pin are ignored by every reader: that is how a displaced holder's late
 * writes stay invisible (docs/decisions.md, "The fenced run log").
 */
import path from "node:path";
import { closeSync, fstatSync } from "node:fs";
import { applyLine, emptyIndex, type RunIndex } from "./run-index.js";
import { corrupt, decodeLines, SNAPSHOT_VERSION, type HeadRecord, type Pin } from "./format.js";
import { segmentEpoch, snapshotId } from "./file-names.js";
import { isWorkflowError, workflowError } from "@phasekit/core";
import { MAX_FILE_BYTES } from "../../io/safe-open.js";
import { openRegularSync, readAt, RealDir } from "../../io/safe-open-sync.js";
import { readSegment } from "./segment-read.js";
import { SnapshotSteps, type SnapV2 } from "./snapshot-index.js";
import type { ValueFiles } from "./values.js";

/** What a reader (or a new holder) learns from the run log folder. */
export interface LoadedChain {
  index: RunIndex;
  /** The highest epoch named by any segment (a claim without a head included); 0 when there is none. */
  maxEpoch: number;
  /** The head segment's epoch (0 when there is no head: a new run). */
  headEpoch: number;
  /** What a new head would pin to accept everything read here: its base and ranges. */
  accepted: { base: string | null; pins: Pin[] };
  /** Every segment and snapshot file name in the folder. */
  segments: number[];
  snapshots: string[];
}

/**
 * Reads the run log in `dir` (absent folder: an empty run). CORRUPT_FILE for anything a crash cannot explain.
 * A snapshot's steps are read through `values` when used (the caller closes it).
 */
export async function loadChain(dir: string, values: ValueFiles): Promise<LoadedChain> {
  // A real folder only (a symlink there is UNSAFE_FILE naming it): another run's history is never read as ours.
  const folder = RealDir.open(dir, "run-log");
  let names: string[] = [];
  if (folder !== null) {
    try {
      names = folder.list();
    } finally {
      folder.close();
    }
  }
  const segments = names.map(segmentEpoch).filter((e): e is number => e !== undefined).sort((a, b) => a - b);
  const snapshots = names.filter((n) => snapshotId(n) !== undefined).sort();
  const maxEpoch = segments.length === 0 ? 0 : (segments[segments.length - 1] as number);
  for (let i = segments.length - 1; i >= 0; i--) {
    const epoch = segments[i] as number;
    const file = path.join(dir, segmentFileName(epoch));
    // The head line, then the lines from the last compaction on (segment-read.ts): never what it superseded.
    const { first, rest, validBytes } = readSegment(file);
    // A claim whose head never landed (the claimant crashed or was displaced before writing it) is void.
    if (first === undefined) continue;
    if (first.record.t !== "head" || first.record.e !== epoch) throw corrupt(file, 0, "a first line that is not this segment's head");
    const head = first.record;
    // A base that is no snapshot name of this folder is the head's fault: name the head, not a path it made up.
    if (head.base !== null && snapshotId(head.base) === undefined) throw corrupt(file, 0, `a head whose base ${JSON.stringify(head.base).slice(0, 120)} is not a snapshot name`);
    for (const line of rest) {
      const r = line.record;
      if (r.e !== epoch) throw corrupt(file, line.start, `a record of epoch ${r.e} in the segment of epoch ${epoch}`);
      if (r.t === "head" || r.t === "snap") throw corrupt(file, line.start, `a second ${r.t} record`);
      // Only a compaction writes an archive, into its snapshot: one in a segment was planted.
      if (r.t === "arch") throw corrupt(file, line.start, "an archive record outside a snapshot");
    }
    // A compaction (`base` record) restarts history at its snapshot: what came before it, pins included, is
    // not read at all (its files may be gone).
    let lastBase = -1;
    rest.forEach((line, i) => {
      if (line.record.t === "base") lastBase = i;
    });
    const baseLine = lastBase === -1 ? undefined : rest[lastBase];
    const base = baseLine === undefined ? head.base : (baseLine.record as { snap: string }).snap;
    const from = baseLine === undefined ? first.end : baseLine.end;
    const index = baseLine === undefined ? await foldAccepted(dir, head, values) : await loadSnapshot(dir, base as string, values);
    for (const line of rest.slice(lastBase + 1)) applyLine(index, file, line);
    const pins: Pin[] = baseLine === undefined ? [...head.pins, [epoch, from, validBytes]] : [[epoch, from, validBytes]];
    return { index, maxEpoch, headEpoch: epoch, accepted: { base, pins }, segments, snapshots };
  }
  return { index: emptyIndex(), maxEpoch, headEpoch: 0, accepted: { base: null, pins: [] }, segments, snapshots };
}

/** File name of the segment of `epoch` (re-exported for callers that only read). */
export function segmentFileName(epoch: number): string {
  return `${String(epoch).padStart(10, "0")}.seg`;
}

async function foldAccepted(dir: string, head: HeadRecord, values: ValueFiles): Promise<RunIndex> {
  const index = head.base === null ? emptyIndex() : await loadSnapshot(dir, head.base, values);
  for (const [epoch, from, to] of head.pins) {
    if (epoch >= head.e) throw corrupt(path.join(dir, segmentFileName(head.e)), 0, `a pin of epoch ${epoch}, not older than the head`);
    const file = path.join(dir, segmentFileName(epoch));
    // Only the pinned range is read: bytes before it were superseded, bytes after it were never accepted.
    const bytes = readPinned(file, from, to, epoch, head.e);
    const decoded = decodeLines(file, bytes, 0, bytes.length, from);
    if (decoded.validBytes !== to) throw corrupt(file, decoded.validBytes, "a pinned range that does not end on a line boundary");
    for (const line of decoded.lines) {
      if (line.record.e !== epoch || line.record.t === "head" || line.record.t === "base" || line.record.t === "snap") {
        throw corrupt(file, line.start, `a ${line.record.t} record of epoch ${line.record.e} inside a pinned range`);
      }
      applyLine(index, file, line);
    }
  }
  return index;
}

function readPinned(file: string, from: number, to: number, epoch: number, by: number): Buffer {
  let opened;
  try {
    opened = openRegularSync(file, { maxBytes: MAX_FILE_BYTES.log, scope: "run-log" });
  } catch (error) {
    // A pinned segment too big or not a regular file is that file's own typed error; anything else names it too.
    if (isWorkflowError(error)) throw error;
    throw corrupt(file, 0, `nothing: segment ${epoch} is pinned by epoch ${by} but cannot be read`, error);
  }
  if (opened === null) throw corrupt(file, 0, `nothing: segment ${epoch} is pinned by epoch ${by} but is gone`);
  const { fd, size } = opened;
  try {
    if (size < to) throw corrupt(file, size, `${size} bytes where epoch ${by} accepted ${to}`);
    return readAt(fd, from, to - from);
  } finally {
    closeSync(fd);
  }
}

/**
 * The index of a snapshot (its first line must be its `snap` header, its size the one it names). Layout 2: the
 * lines before the step section are folded, the steps are searched in place. Layout 1: the index section is
 * folded line by line.
 */
export async function loadSnapshot(dir: string, name: string, values: ValueFiles): Promise<RunIndex> {
  const file = path.join(dir, name);
  if (snapshotId(name) === undefined) throw corrupt(file, 0, "a base that is not a snapshot name");
  try {
    // Opened through `values`, which keeps it: step lines are read from this file later, when used.
    const fd = values.descriptor(file);
    return indexOfSnapshot(file, fd, fstatSync(fd).size, values);
  } catch (error) {
    throw isWorkflowError(error) ? error : corrupt(file, 0, "nothing: the snapshot a head relies on cannot be read", error);
  }
}

function indexOfSnapshot(file: string, fd: number, size: number, values: ValueFiles): RunIndex {
  const head = readAt(fd, 0, Math.min(size, 4096));
  const nl = head.indexOf(0x0a);
  const first = nl === -1 ? undefined : decodeLines(file, head, 0, nl + 1).lines[0];
  if (first !== undefined && first.record.t !== "snap") throw corrupt(file, 0, "no snap header");
  if (first?.record.t !== "snap" || first.record.size !== size) {
    throw workflowError("run-log", "CORRUPT_FILE", `${file} is ${size} bytes, not the snapshot its first line describes.`, {
      file,
      value: size,
      hint: "restore the file from a backup or move the run folder aside",
    });
  }
  const snap = first.record;
  const v2 = snap.v === SNAPSHOT_VERSION ? (snap as SnapV2) : undefined;
  const foldEnd = v2 === undefined ? snap.idx : v2.steps;
  if (foldEnd < first.end) throw corrupt(file, 0, "a snap header whose sections do not fit");
  // What is read into memory at once is capped, whatever the header says (the steps are read by position).
  for (const [what, bytes] of [["index section", foldEnd], ["key block and offset table", v2 === undefined ? 0 : v2.idx - v2.keys]] as const) {
    if (bytes > MAX_FILE_BYTES.log) {
      throw workflowError("run-log", "FILE_TOO_LARGE", `${file} has a ${what} of ${bytes} bytes, above the cap of ${MAX_FILE_BYTES.log}; it was not read.`, {
        file,
        value: bytes,
        max: MAX_FILE_BYTES.log,
        hint: "restore the file from a backup or move the run folder aside; phasekit never writes sections this large",
      });
    }
  }
  const bytes = readAt(fd, 0, foldEnd);
  const decoded = decodeLines(file, bytes);
  if (decoded.validBytes !== foldEnd) throw corrupt(file, decoded.validBytes, "a torn line (snapshots are synced before use)");
  const index = emptyIndex(v2 === undefined ? undefined : new SnapshotSteps(file, fd, v2, values));
  for (const line of decoded.lines.slice(1)) {
    if (v2 !== undefined && (line.step !== undefined || line.record.t === "start" || line.record.t === "done" || line.record.t === "fail")) {
      throw corrupt(file, line.start, "a step line outside the sorted step section");
    }
    applyLine(index, file, line);
  }
  index.records += v2?.n ?? 0;
  return index;
}
