/** The parts of an open run log that its helpers (states, artifacts, compaction) share. */
import type { RunIndex } from "./run-index.js";
import type { FsBoundary, SegmentWriter } from "./segment-writer.js";
import type { ValueFiles } from "./values.js";

/** See the module comment. */
export interface LogParts {
  runDir: string;
  dir: string;
  epoch: number;
  writer: SegmentWriter;
  values: ValueFiles;
  index: RunIndex;
  boundary: FsBoundary;
  /** Snapshots written by this epoch so far (names are numbered). */
  snapshots: number;
  /** What the claim found and wrote (fold.ts decides at close from it). */
  claimed: ClaimFacts;
}

/** What a claim found and wrote. */
export interface ClaimFacts {
  /** Bytes of the head line: a segment still this long when its holder closes holds nothing but its claim. */
  headBytes: number;
  /** Segment files in the history folder when the claim read it (its own excluded). */
  segmentsBefore: number;
  /** The head's base is a snapshot this claim wrote from a run of the earlier format (it must stay). */
  imported: boolean;
}

