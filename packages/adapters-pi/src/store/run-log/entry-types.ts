/** The shapes of index entries, shared by the index and its lazy step map. */

/** Where a value's bytes lie: a file of the run log (absolute path), offset and length. */
export interface ValueLocation {
  file: string;
  offset: number;
  length: number;
  /** A step output stored as a delta on an earlier output of the same file (output-delta.ts). */
  delta?: boolean;
}

/** The latest record of one step key. */
export interface StepEntry {
  key: string;
  status: "started" | "completed" | "failed";
  epoch: number;
  inputFingerprint: string;
  attempt: number;
  outputFingerprint?: string;
  /** Artifact path relative to the run folder, when the output is not inline. */
  artifact?: string;
  /** The inline output's bytes. */
  output?: ValueLocation;
  error?: string;
  /** When the record was made (epoch ms), if the writer said. */
  at?: number;
  /** When the attempt started (epoch ms), if the writer said. */
  startedAt?: number;
  /** A rerun mark written after this record names its step (set by the reader, never stored). */
  superseded?: boolean;
  /** With `superseded`: that mark is spent, the run ended after it without reaching the step (set by the reader). */
  rerunSpent?: boolean;
}
