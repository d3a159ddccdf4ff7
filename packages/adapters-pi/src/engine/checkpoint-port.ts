/**
 * The checkpoint port: what `ctx.step`, dispatch replay and commit intents use of a run's history, whatever
 * the backend (the fs run log, PostgreSQL, the contract suite's memory store). Also the two record builders
 * every backend shares: a step key's check and a commit intent's record.
 */
import type { CommitRecord, StepRecord } from "./records.js";
import { validateStepId } from "../io/plan-paths.js";
import type { RerunReason } from "./reuse-decision.js";

/** Why a step ran instead of being reused. */
export type { RerunReason } from "./reuse-decision.js";

/** Outcome of `step`: the stored output, or the fresh one and why it had to run. */
export type StepOutcome<T> =
  | { reused: true; output: T; record: StepRecord }
  | { reused: false; reason: RerunReason; output: T; record: StepRecord; movedAside?: string };

/** What `compact` did. */
export interface CompactionReport {
  recordsBefore: number;
  recordsAfter: number;
  artifactsRemoved: number;
}

/** Input of `recordCommitIntent`. */
export interface CommitIntent {
  id: string;
  message: string;
  files: string[];
  stepId?: string;
}

/**
 * What the caller already knows of a step call: its input's fingerprint (`ctx.step` computes it once, for its
 * key and the store) and, optionally, its own rule on a new attempt.
 */
export interface KnownInput {
  readonly inputFingerprint: string;
  /**
   * Called with the attempt number a run of the body would be, after the reuse decision and before anything is
   * recorded (never for a reuse, nor for the rerun of a completed step whose stored output failed its check);
   * throwing refuses the attempt. `ctx.step`'s attempt cap: the decision is made once, by the store's flow.
   */
  readonly admit?: ((attempt: number) => void) | undefined;
}

/** The checkpoint store of one run folder. */
export interface CheckpointStore {
  readonly file: string;
  /** Runs `fn` unless a completed record with the same input fingerprint and an intact artifact exists. */
  step<T>(id: string, input: unknown, fn: (attempt: number) => T | Promise<T>, known?: KnownInput): Promise<StepOutcome<T>>;
  /** The latest record of a step, if any. */
  record(id: string): Promise<StepRecord | undefined>;
  /** The latest record of every step, in the order the run first recorded its steps (a rerun or a fork counts in it). */
  records(): Promise<StepRecord[]>;
  /** Records a commit about to be made (status `intended`). */
  recordCommitIntent(intent: CommitIntent): Promise<CommitRecord>;
  /** Marks an intended commit as made; NOT_FOUND if it was never recorded. */
  markCommitted(id: string, options?: { sha?: string }): Promise<CommitRecord>;
  /** Every commit record; those still `intended` were interrupted before or during `git commit`. */
  commits(): Promise<CommitRecord[]>;
  /** Rewrites the log with the latest record per key and deletes artifacts no record references. */
  compact(): Promise<CompactionReport>;
  /**
   * Writes a rerun mark (reuse-decision.ts `keysFrom`) superseding `from` and every step recorded after it;
   * NOT_FOUND when the history holds no `from`, INVALID_OPTIONS when `from` is phasekit's own entry. Only through a lease taken for this alone (rerunFrom): a mark supersedes the
   * records of earlier leases. A backend without it cannot rerun a run in place (rerunFrom says UNSUPPORTED).
   */
  supersede?(from: string, note: { reason?: string }): Promise<{ keys: string[] }>;
  /**
   * Called as the run ends (completed, failed or cancelled): records the rerun marks of the steps it did not reach
   * as spent (rerun-spent.ts), so retention and views stop calling the run pending; writes nothing when no mark
   * waits. The keys it spent. Absent where the backend has no marks.
   */
  spendRerunMarks?(): Promise<{ keys: string[] }>;
}

// `lint#2` is the key of the second `lint` step of a run (see run/context.ts); '#' is not allowed in an id itself.
const OCCURRENCE = /#[1-9][0-9]{0,8}$/;

/** The `intended` record of a commit intent (id and step id checked), stamped `at`. */
export function commitIntentRecord(intent: CommitIntent, at: string): CommitRecord {
  const id = checkStepKey(intent?.id);
  if (intent.stepId !== undefined) checkStepKey(intent.stepId);
  return {
    v: 1,
    kind: "commit",
    id,
    status: "intended",
    message: intent.message,
    // Copied only when it is a list: a string would spread into letters; anything else is the record check's to refuse.
    files: Array.isArray(intent.files) ? [...intent.files] : intent.files,
    ...(intent.stepId === undefined ? {} : { stepId: intent.stepId }),
    intendedAt: at,
  };
}

/** A step key: a valid step id, optionally with the occurrence suffix `#n`; throws INVALID_STEP_ID. */
export function checkStepKey(value: unknown): string {
  const base = typeof value === "string" ? value.replace(OCCURRENCE, "") : value;
  const r = validateStepId(base);
  if (!r.ok) throw r.error;
  return value as string;
}
