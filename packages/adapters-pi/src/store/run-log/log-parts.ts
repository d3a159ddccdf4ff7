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
}

