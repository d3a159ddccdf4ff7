/**
 * The history port: what a backend does for the checkpoints of one run under one lease (or, without one, for a
 * reader): the step port (step-port.ts) plus its records, its commit intents, rerun marks and compaction. The
 * engine (checkpoints.ts) turns it into the `CheckpointStore` every caller uses; every rule (step keys, the
 * reuse decision, commit records, what a rerun supersedes, the refusals) is the engine's.
 */
import type { CompactionReport } from "./checkpoint-port.js";
import type { CommitRecord, StepRecord } from "./records.js";
import type { PriorStep } from "./reuse-decision.js";
import type { StepPort } from "./step-port.js";

/** A rerun mark as the engine asks a backend to write it. */
export interface MarkRequest {
  from: string;
  /** `from` and every step the history first recorded after it. */
  keys: string[];
  at: string;
  reason?: string;
}

/** Spent rerun marks as the engine asks a backend to record them (rerun-spent.ts). */
export interface SpendRequest {
  /** The steps whose records are superseded by a mark not spent yet. */
  keys: string[];
  at: string;
}

/** One backend's side of a run's checkpoints (see the module comment). `what` names the write in refusals. */
export interface HistoryPort<R extends PriorStep, S> extends StepPort<R, S> {
  /** Where the history lives, named in errors. */
  readonly file: string;
  /** The run's slug, named in hints. */
  readonly run: string;
  /** The clock commit records and marks are stamped with. */
  now(): Date;
  /** The port's record shape of a backend record. */
  view(record: R): StepRecord;
  /** The latest record of every step, in the order the run first recorded its steps (a rerun or a fork counts in it). */
  records(): Promise<StepRecord[]>;
  /** The latest record of every commit id. */
  commits(): Promise<ReadonlyMap<string, CommitRecord>>;
  /** Stores a commit record the engine checked, fenced like a step; the record as stored. */
  putCommit(record: CommitRecord): Promise<CommitRecord>;
  /** Writes a rerun mark; absent where the backend cannot rerun a run in place. */
  mark?(mark: MarkRequest): Promise<void>;
  /** Records that the marks of `keys` are spent, fenced like a step; absent where the backend has no marks. */
  spend?(spend: SpendRequest): Promise<void>;
  /**
   * Whether the history holds any rerun mark, spent or not, known without reading every step's record; absent
   * where the backend cannot tell cheaply. False lets a run's end skip the records (nothing can await a rerun).
   */
  hasMarks?(): boolean;
  /** Drops what no record needs any more. */
  compact(): Promise<CompactionReport>;
}
