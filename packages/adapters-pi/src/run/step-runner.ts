/**
 * `ctx.step`: keys (id + occurrence), caps, retries with back-off and the per-step signal (lock loss, stop
 * request, timeout) around one checkpointed step. A step writes only to the run log (one synced append on a
 * miss); which step is in flight and which completed last is kept here and folded into the next workflow.json
 * write, never written per step. Split from context.ts, which wires it.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { workflowError } from "@phasekit/core";
import { fingerprint } from "../engine/fingerprint.js";
import type { RerunReason } from "../engine/checkpoint-port.js";
import type { CheckpointStore } from "../engine/checkpoint-port.js";
import type { PlanStore, StoreLock } from "../store/plan-store.js";
import type { Reporter } from "./reporter.js";
import { RESERVED_STEP_PREFIX } from "./dispatch-record.js";
import { inStep } from "./step-scope.js";
import { stepErrorText } from "../engine/step-error.js";
import { checkStepOptions, createStopWatch, retryable, type StepFn, type StepOptions, type StepResult, type StepValue } from "./step-options.js";

const WHY: Record<RerunReason, string> = {
  "no-record": "no checkpoint yet",
  started: "the last attempt started but never finished (crash or kill)",
  failed: "the last attempt failed",
  "input-changed": "its input changed since the checkpoint",
  "artifact-missing": "the stored output is missing",
  "artifact-corrupt": "the stored output no longer matches its fingerprint",
  superseded: "a rerun (phasekit rerun --from) superseded its checkpoint",
};

/** What happened to one `ctx.step` call in this run. */
export type StepReport =
  | { stepId: string; outcome: "reused"; why: string }
  | { stepId: string; outcome: "ran"; reason: RerunReason; why: string; /** A damaged stored output moved aside here. */ evidence?: string };

/** The parts of the run context's dependencies a step uses. */
export interface StepDeps {
  lock: StoreLock;
  /** Where pause/stop requests are read (the run's store). */
  store: Pick<PlanStore, "readControl">;
  checkpoints: CheckpointStore;
  reporter: Reporter;
  slug: string;
  runDir: string;
  maxSteps: number;
  maxAttempts: number;
}

/** What the step runner needs from its context. */
export interface StepRunnerDeps {
  deps: StepDeps;
  checkControl(): Promise<void>;
  /** The context's report list, appended to in call order. */
  steps: StepReport[];
  lockLost(): Error;
  /**
   * Mark step functions so the workflow handle can refuse a dispatch made inside one (see step-scope.ts). Only
   * runs that carry a core workflow can dispatch; the mark costs an async-context scope per step, so others skip it.
   */
  markSteps: boolean;
  /**
   * Journals a failed attempt (`step-failed`: step, attempt, error): the history keeps only a step's latest
   * record, and a compaction drops the rest, so an attempt that failed before one succeeded is told here.
   */
  journal?: (event: string, data: unknown) => Promise<void>;
}

/** `ctx.step`, and what workflow.json should say about steps when it is next written. */
export interface StepRunner {
  step<T extends StepValue>(id: string, input: unknown, fn: StepFn<T>, options?: StepOptions): Promise<StepResult<T>>;
  /** The oldest step still running, if any. */
  inFlight(): string | undefined;
  /** The step that completed (or was reused) last, if any. */
  lastCompleted(): string | undefined;
}

/** Builds the `ctx.step` of one run context. */
export function createStepRunner(r: StepRunnerDeps): StepRunner {
  const { deps, checkControl, steps } = r;
  let lastCompleted: string | undefined;
  const lockLost = r.lockLost;
  let stepCount = 0;
  // Occurrences per step id in this invocation: the nth `ctx.step("lint", …)` is keyed `lint#n` (n ≥ 2), so a
  // loop over inputs reuses each of its steps on resume instead of re-running all but the last.
  const occurrences = new Map<string, number>();
  // Keys whose last attempt failed in this invocation, by id and input fingerprint: a call with the same id and
  // input is that step's next attempt, not a new occurrence, so a retry in a `catch` is reused on resume
  // instead of running the side effect again.
  const failedKeys = new Map<string, Map<string, string>>();
  const inFlight = new Map<string, AbortController>();
  const stopWatch = createStopWatch(deps, inFlight);
  // One listener on the lock's signal for the run, not one per step (they were a measurable part of a miss, and
  // passed Node's limit of 10 with parallel steps): a lost lock aborts the signal of every step in flight, as the
  // stop watch does for a stop. Each step keeps a signal of its own, so nothing reaches a step that has ended.
  // Retries waiting out their back-off are woken the same way.
  const napping = new Set<AbortController>();
  const abortInFlight = (): void => {
    for (const c of [...inFlight.values(), ...napping]) c.abort(deps.lock.signal.reason);
  };
  deps.lock.signal.addEventListener("abort", abortInFlight, { once: true });

  /** The history key of a call, decided synchronously so that parallel calls get their keys in call order. */
  const keyOf = (id: string, inputFp: string): string => {
    const retry = failedKeys.get(id)?.get(inputFp);
    if (retry !== undefined) {
      failedKeys.get(id)?.delete(inputFp);
      return retry;
    }
    const n = (occurrences.get(id) ?? 0) + 1;
    occurrences.set(id, n);
    return n === 1 ? id : `${id}#${n}`;
  };

  const step = async <T extends StepValue>(id: string, input: unknown, fn: StepFn<T>, options: StepOptions = {}): Promise<StepResult<T>> => {
    if (typeof id === "string" && id.startsWith(RESERVED_STEP_PREFIX)) throw reservedId(id);
    const inputFp = fingerprint(input);
    const key = keyOf(id, inputFp);
    try {
      return await runKey<T>(key, id, input, inputFp, fn, options);
    } catch (error) {
      let byInput = failedKeys.get(id);
      if (byInput === undefined) failedKeys.set(id, (byInput = new Map()));
      byInput.set(inputFp, key);
      throw error;
    }
  };

  const runKey = async <T extends StepValue>(key: string, id: string, input: unknown, inputFp: string, fn: StepFn<T>, options: StepOptions): Promise<StepResult<T>> => {
    const opts = checkStepOptions(id, options);
    await checkControl();
    stepCount++;
    if (stepCount > deps.maxSteps) {
      throw workflowError("run", "MAX_STEPS_REACHED", `run ${deps.slug} reached maxSteps (${deps.maxSteps}) at step ${key}.`, {
        field: "maxSteps",
        value: deps.maxSteps,
        hint: "raise maxSteps if the run really needs more steps, or fix the loop that keeps calling ctx.step",
      });
    }
    for (let tryNo = 0; ; tryNo++) {
      try {
        return (await attemptStep(key, input, inputFp, fn, opts)) as StepResult<T>;
      } catch (error) {
        if (tryNo >= opts.retries || !retryable(error) || deps.lock.signal.aborted || stopWatch.stopped() !== null) throw error;
        const wait = Math.min(opts.maxBackoffMs, opts.backoffMs * 2 ** tryNo);
        deps.reporter.warning(`${key}: attempt failed (${error instanceof Error ? error.message : String(error)}); retrying in ${wait} ms`, { id: `step:${key}` });
        const nap = new AbortController();
        napping.add(nap);
        await sleep(wait, undefined, { signal: nap.signal })
          .catch(() => {
            throw lockLost();
          })
          .finally(() => napping.delete(nap));
        await checkControl();
      }
    }
  };

  // The store's own reuse decision says which attempt this call would be; the cap refuses it before fn runs.
  const capAttempts = (key: string, attempt: number): void => {
    if (attempt <= deps.maxAttempts) return;
    throw workflowError("run", "MAX_ATTEMPTS_REACHED", `step ${key} of run ${deps.slug} already failed ${attempt - 1} time(s) (maxAttempts ${deps.maxAttempts}).`, {
      field: "maxAttempts",
      value: deps.maxAttempts,
      stepId: key,
      hint: "fix the cause of the failure, then raise maxAttempts or start a new run",
    });
  };

  const attemptStep = async <T extends StepValue>(key: string, input: unknown, inputFingerprint: string, fn: StepFn<T>, opts: Required<StepOptions>): Promise<unknown> => {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let failed: { attempt: number; error: string } | undefined;
    const timeLimit = (ms: number): Promise<never> =>
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const e = workflowError("run", "STEP_TIMEOUT", `step ${key} of run ${deps.slug} ran longer than ${ms} ms; its signal was aborted.`, {
            stepId: key,
            value: ms,
            hint: "raise timeoutMs for this step, or make fn honour its signal sooner",
          });
          controller.abort(e);
          reject(e);
        }, ms);
      });
    const outcome = await deps.checkpoints
      .step(key, input, async (attempt) => {
        inFlight.set(key, controller);
        if (deps.lock.signal.aborted) controller.abort(deps.lock.signal.reason);
        stopWatch.start();
        const run = (): T | Promise<T> => fn(controller.signal, attempt);
        try {
          const body = r.markSteps ? inStep(key, run) : run();
          // Only a step with a time limit races a timer: most have none, and the race cost every step its promises.
          return await (opts.timeoutMs === 0 ? body : Promise.race([body, timeLimit(opts.timeoutMs)]));
        } catch (error) {
          failed = { attempt, error: stepErrorText(error) };
          throw error;
        }
      }, { inputFingerprint, admit: (attempt) => capAttempts(key, attempt) })
      .catch(async (error: unknown) => {
        // A checkpoint write refused because the lock was lost surfaces as WRITE_FAILED; say what really happened.
        if (deps.lock.signal.aborted) throw lockLost();
        // Best effort: the failure itself is the step's record; the journal line is for people.
        if (failed !== undefined) await r.journal?.("step-failed", { step: key, ...failed }).catch(() => undefined);
        // A step that failed because a stop aborted its signal ends the run cancelled, not failed.
        const stop = stopWatch.stopped();
        throw stop !== null && controller.signal.aborted ? stop : error;
      })
      .finally(() => {
        clearTimeout(timer);
        inFlight.delete(key);
      });
    lastCompleted = key;
    if (outcome.reused) {
      const why = "completed checkpoint with the same input fingerprint";
      steps.push({ stepId: key, outcome: "reused", why });
      deps.reporter.report("info", `↺ ${key}: reused (${why})`, { id: `step:${key}` });
      return outcome.output;
    }
    steps.push({ stepId: key, outcome: "ran", reason: outcome.reason, why: WHY[outcome.reason], ...(outcome.movedAside === undefined ? {} : { evidence: outcome.movedAside }) });
    if (outcome.movedAside !== undefined) {
      deps.reporter.warning(`${key}: its stored output was damaged; kept as evidence at ${outcome.movedAside}`, { id: `step:${key}:evidence` });
    }
    deps.reporter.report("info", `✓ ${key}`, { id: `step:${key}` });
    return outcome.output;
  };
  return { step, inFlight: () => inFlight.keys().next().value, lastCompleted: () => lastCompleted };
}

function reservedId(id: string): Error {
  return workflowError("run", "INVALID_OPTIONS", `step id ${JSON.stringify(id)} starts with "${RESERVED_STEP_PREFIX}", which phasekit keeps for its own history entries.`, {
    field: "id",
    value: id,
    hint: "name the step without that prefix",
  });
}
