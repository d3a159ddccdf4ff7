/**
 * The step port: what a backend does for one step of one run under one lease, and nothing it decides. The
 * engine (step-flow.ts) holds every rule of a step (the key, the reuse decision, the output check, the attempt,
 * the order of records around the body, what a failure records); a backend only reads and writes its records.
 * `R` is the backend's record of a step, `S` its record of a start.
 */
import type { JsonValue } from "../io/plain-json.js";
import type { PriorStep } from "./reuse-decision.js";

/** A step the engine decided to run. */
export interface StepStart {
  key: string;
  attempt: number;
  inputFingerprint: string;
}

/** The stored output of a completed step: its value, or why the step must run again (and where a damaged copy went). */
export type StoredOutput = { ok: true; output: unknown } | { ok: false; reason: "artifact-missing" | "artifact-corrupt"; movedAside?: string };

/** An output about to be recorded: its canonical JSON, that text's fingerprint, and whether it replaces a damaged copy. */
export interface FreshOutput {
  text: string;
  /** A plain copy of the output, equal to `JSON.parse(text)`, the backend's to keep (a base for the next delta). */
  value: JsonValue;
  fingerprint: string;
  /** The stored copy failed its check (or was missing): the backend replaces it whole, never a delta on it. */
  repair: boolean;
}

/** One backend's side of a step (see the module comment). */
export interface StepPort<R extends PriorStep, S> {
  /** Throws when this caller may not make the write `what` (no lease: LOCK_NOT_OWNED; displaced: LOCK_LOST), before any work. */
  mayWrite(what: string): void;
  /** The step's latest record, flagged `superseded` where a rerun mark names it. */
  latest(key: string): R | undefined | Promise<R | undefined>;
  /** The stored output of `record` (a completed record of this very input) checked against `outputFingerprint`. */
  stored(record: R, outputFingerprint: string): Promise<StoredOutput>;
  /** Records the start, before the body (it need not be synced: losing it only loses the count of this attempt). */
  start(step: StepStart): Promise<S>;
  /** Right before the body: throws when the lease was lost since the start landed (a displaced holder never starts the work). */
  beforeBody(start: S): void | Promise<void>;
  /** Records the failure; the engine ignores its errors (the body's own error is what the caller sees). */
  fail(start: S, error: string): Promise<void>;
  /** Records the completion durably; the record as the history now holds it. */
  complete(start: S, output: FreshOutput): Promise<R>;
}
