/**
 * Checkpoints of a run: `step(id, input, fn)` reuses a completed step whose input fingerprint matches and whose
 * artifact verifies, and runs `fn` in every other case, saying why. Also records commit intents (seed 003).
 * One store per run folder, used by the holder of the plan lock: appends from two processes would interleave
 * safely, but a compaction by one would drop the other's records.
 */
import path from "node:path";
import { workflowError, type WorkflowError } from "@phasekit/core";
import { createArtifactStore, encodeArtifact, type ArtifactStore } from "./artifacts.js";
import {
  apply,
  appendRecord,
  CHECKPOINT_LOG_FILE,
  cutTornTail,
  readLog,
  rewriteLog,
  type CheckpointLogRecord,
  type CommitRecord,
  type FoldedLog,
  type StepRecord,
} from "./checkpoint-log.js";
import { fingerprint, type Fingerprint } from "./fingerprint.js";
import { nodeFs, type FsPort } from "../io/fs-port.js";
import { validateStepId } from "../io/plan-paths.js";
import type { RerunReason } from "./reuse-decision.js";
import { stepErrorText } from "./step-error.js";

const SCOPE = "checkpoints";
/** Auto-compaction starts once the log holds this many superseded records (and more than live ones). */
export const DEFAULT_AUTO_COMPACT_AFTER = 1_000;

/** Why a step ran instead of being reused. */
export type { RerunReason } from "./reuse-decision.js";

/** Outcome of `step`: the stored output, or the fresh one and why it had to run. */
export type StepOutcome<T> =
  | { reused: true; output: T; record: StepRecord }
  | { reused: false; reason: RerunReason; output: T; record: StepRecord; movedAside?: string };

/** Options of `createCheckpointStore`. */
export interface CheckpointStoreOptions {
  runDir: string;
  /** Clock for record times. */
  now: () => Date;
  fs?: FsPort;
  /** Superseded records that trigger a compaction after an append (default 1,000; 0 turns it off). */
  autoCompactAfter?: number;
}

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

/** The checkpoint store of one run folder. */
export interface CheckpointStore {
  readonly file: string;
  /** Runs `fn` unless a completed record with the same input fingerprint and an intact artifact exists. */
  step<T>(id: string, input: unknown, fn: (attempt: number) => T | Promise<T>): Promise<StepOutcome<T>>;
  /** The latest record of a step, if any. */
  record(id: string): Promise<StepRecord | undefined>;
  /** The latest record of every step. */
  records(): Promise<StepRecord[]>;
  /** Records a commit about to be made (status `intended`). */
  recordCommitIntent(intent: CommitIntent): Promise<CommitRecord>;
  /** Marks an intended commit as made; NOT_FOUND if it was never recorded. */
  markCommitted(id: string, options?: { sha?: string }): Promise<CommitRecord>;
  /** Every commit record; those still `intended` were interrupted before or during `git commit`. */
  commits(): Promise<CommitRecord[]>;
  /** Rewrites the log with the latest record per key and deletes artifacts no record references. */
  compact(): Promise<CompactionReport>;
}

/** Creates the checkpoint store of `runDir` (the log is read on first use). Throws INVALID_OPTIONS at once. */
export function createCheckpointStore(options: CheckpointStoreOptions): CheckpointStore {
  const { runDir, now } = checkOptions(options);
  const fs = options.fs ?? nodeFs;
  const file = path.join(path.resolve(runDir), CHECKPOINT_LOG_FILE);
  const artifacts = createArtifactStore({ runDir, fs });
  const autoCompactAfter = options.autoCompactAfter ?? DEFAULT_AUTO_COMPACT_AFTER;
  let loaded: Promise<FoldedLog> | undefined;
  // Artifacts written but not yet referenced by an appended record: a compaction meanwhile must keep them.
  const pending = new Set<string>();

  const load = (): Promise<FoldedLog> => (loaded ??= open().catch((e: unknown) => ((loaded = undefined), Promise.reject(e))));

  async function open(): Promise<FoldedLog> {
    const r = await readLog(fs, file);
    if (!r.ok) throw r.error;
    if (r.log.tornBytes > 0) await cutTornTail(fs, file, r.log.validBytes);
    return r.log;
  }

  // Appends and compactions of this store run one at a time: an append racing a compaction's rename would
  // land in the replaced file and be lost.
  let queue: Promise<unknown> = Promise.resolve();
  function exclusive<R>(fn: () => Promise<R>): Promise<R> {
    const run = queue.then(fn);
    queue = run.catch(() => undefined);
    return run;
  }

  const append = (record: CheckpointLogRecord): Promise<void> =>
    exclusive(async () => {
      const log = await load();
      try {
        await appendRecord(fs, file, record);
      } catch (error) {
        // The failed append was cut back (or, if even that failed, the next load cuts the torn tail): re-read.
        loaded = undefined;
        throw error;
      }
      apply(log, record);
      log.lines++;
      const live = log.steps.size + log.commits.size;
      const superseded = log.lines - live;
      if (autoCompactAfter > 0 && superseded >= autoCompactAfter && superseded > live) await compactNow();
    });

  async function step<T>(id: string, input: unknown, fn: (attempt: number) => T | Promise<T>): Promise<StepOutcome<T>> {
    const stepId = checkStepKey(id);
    const inputFingerprint = fingerprint(input);
    const log = await load();
    const previous = log.steps.get(stepId);
    const decision = await decide(artifacts, previous, inputFingerprint);
    if (decision.reused) return { reused: true, output: decision.output as T, record: decision.record };
    const started: StepRecord = {
      v: 1,
      kind: "step",
      stepId,
      status: "started",
      // Consecutive tries of this input since the step last completed: what maxAttempts limits. A new input or
      // a completion starts again at 1, so earlier successes never count against a retry budget.
      attempt: previous !== undefined && previous.status !== "completed" && previous.inputFingerprint === inputFingerprint ? previous.attempt + 1 : 1,
      inputFingerprint,
      startedAt: stamp(now),
    };
    await append(started);
    let output: T;
    let stored: { fingerprint: Fingerprint; ref: string };
    try {
      // A step that returns nothing stores null: `undefined` is no JSON value, and refusing it after fn ran
      // would repeat fn's side effect on every resume.
      output = ((await fn(started.attempt)) ?? null) as T;
      const encoded = encodeArtifact(output);
      pending.add(encoded.fingerprint);
      stored = await artifacts.putEncoded(encoded);
    } catch (error) {
      // If even the failure record cannot be written, the started record still makes the next run rerun.
      await append({ ...started, status: "failed", finishedAt: stamp(now), error: describe(error) }).catch(() => undefined);
      throw error;
    }
    const completed: StepRecord = { ...started, status: "completed", outputFingerprint: stored.fingerprint, artifact: stored.ref, finishedAt: stamp(now) };
    try {
      await append(completed);
    } finally {
      pending.delete(stored.fingerprint);
    }
    const aside = decision.reason === "artifact-corrupt" ? artifacts.movedAside.at(-1)?.aside : undefined;
    return { reused: false, reason: decision.reason, output, record: completed, ...(aside === undefined ? {} : { movedAside: aside }) };
  }

  async function recordCommitIntent(intent: CommitIntent): Promise<CommitRecord> {
    const record = commitIntentRecord(intent, stamp(now));
    await append(record);
    return record;
  }

  async function markCommitted(id: string, options: { sha?: string } = {}): Promise<CommitRecord> {
    const log = await load();
    const intent = log.commits.get(id);
    if (intent === undefined) {
      throw workflowError(SCOPE, "NOT_FOUND", `no commit intent "${id}" in ${file}.`, { file, field: "id", value: id, hint: "call recordCommitIntent before the commit" });
    }
    const { sha } = options;
    const record: CommitRecord = { ...intent, status: "committed", committedAt: stamp(now), ...(sha === undefined ? {} : { sha }) };
    await append(record);
    return record;
  }

  async function compactNow(): Promise<CompactionReport> {
    const log = await load();
    const keep: CheckpointLogRecord[] = [...log.steps.values(), ...log.commits.values()];
    const recordsBefore = log.lines;
    await rewriteLog(fs, file, keep);
    log.lines = keep.length;
    log.validBytes = 0; // only used while loading
    const referenced = new Set<string>(pending);
    for (const r of log.steps.values()) if (r.outputFingerprint !== undefined) referenced.add(r.outputFingerprint);
    let artifactsRemoved = 0;
    for (const fp of await artifacts.list()) {
      if (referenced.has(fp)) continue;
      await artifacts.remove(fp);
      artifactsRemoved++;
    }
    return { recordsBefore, recordsAfter: keep.length, artifactsRemoved };
  }

  return {
    file,
    step,
    record: async (id) => (await load()).steps.get(id),
    records: async () => [...(await load()).steps.values()],
    recordCommitIntent,
    markCommitted,
    commits: async () => [...(await load()).commits.values()],
    compact: () => exclusive(compactNow),
  };
}

type Decision = { reused: true; output: unknown; record: StepRecord } | { reused: false; reason: RerunReason };

async function decide(artifacts: ArtifactStore, previous: StepRecord | undefined, input: Fingerprint): Promise<Decision> {
  if (previous === undefined) return { reused: false, reason: "no-record" };
  if (previous.status !== "completed") return { reused: false, reason: previous.status };
  if (previous.inputFingerprint !== input) return { reused: false, reason: "input-changed" };
  if (previous.outputFingerprint === undefined) return { reused: false, reason: "artifact-missing" };
  const read = await artifacts.get(previous.outputFingerprint as Fingerprint);
  if (read.ok) return { reused: true, output: read.value, record: previous };
  return { reused: false, reason: read.reason === "missing" ? "artifact-missing" : "artifact-corrupt" };
}

function checkOptions(o: CheckpointStoreOptions): { runDir: string; now: () => Date } {
  const bad = (field: string, value: unknown, hint: string): WorkflowError =>
    workflowError(SCOPE, "INVALID_OPTIONS", `createCheckpointStore: option ${field} is invalid.`, { field, value: typeof value, hint });
  if (typeof o?.runDir !== "string" || o.runDir === "") throw bad("runDir", o?.runDir, "pass the run folder's path");
  if (typeof o.now !== "function") throw bad("now", o.now, "pass a clock: () => Date");
  if (o.autoCompactAfter !== undefined && !(Number.isInteger(o.autoCompactAfter) && o.autoCompactAfter >= 0)) {
    throw bad("autoCompactAfter", o.autoCompactAfter, "use an integer ≥ 0");
  }
  return { runDir: o.runDir, now: o.now };
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

function stamp(now: () => Date): string {
  return now().toISOString();
}

function describe(error: unknown): string {
  return stepErrorText(error);
}
