/**
 * What a `runWorkflow` body works with: checkpointed steps, control checks, the run's metadata and (when the run
 * carries one) its core workflow state. Every durable change goes through `writeMeta`, which refuses to write
 * once the lock is lost and relies on workflow.json's generation check for the race that remains.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { fingerprint } from "../store/fingerprint.js";
import { checkStepOptions, createStopWatch, retryable, type StepFn, type StepOptions, type StepResult, type StepValue } from "./step-options.js";
import { isWorkflowError, workflowError } from "@phasekit/core";
import { createWorkflowHandle } from "./workflow-handle.js";
import type { RerunReason } from "../store/checkpoints.js";
import { clearControlRequest, readControlRequest, readPauseRequest } from "./control-signals.js";
import { runVerificationPolicy } from "../verification/policy.js";
import type { WorkflowMetadata, WorkflowMetadataInput } from "../store/metadata-schema.js";

import type { RunContext, RunContextDeps, RunContextInternals, StepReport } from "./context-types.js";

export type { RunContext, RunContextDeps, RunContextInternals, StepReport } from "./context-types.js";

const WHY: Record<RerunReason, string> = {
  "no-record": "no checkpoint yet",
  started: "the last attempt started but never finished (crash or kill)",
  failed: "the last attempt failed",
  "input-changed": "its input changed since the checkpoint",
  "artifact-missing": "the stored output is missing",
  "artifact-corrupt": "the stored output no longer matches its fingerprint",
};

/** Builds the body's context over an acquired lock and the run's current metadata. */
export function createRunContext(deps: RunContextDeps): RunContextInternals {
  let meta = deps.metadata;
  let baseline: unknown;
  let stepCount = 0;
  const steps: StepReport[] = [];
  const iso = (): string => deps.clock().toISOString();

  const assertLock = (): void => {
    if (deps.lock.signal.aborted) throw lockLost(deps);
  };
  // Every workflow.json write asks the lock first (holder file and refresh age), not just the abort flag:
  // the flag is set by a timer, which a process woken from SIGSTOP may not have run yet.
  // Parallel steps write workflow.json too: one write at a time, each from the generation the last one left.
  let metaQueue: Promise<unknown> = Promise.resolve();
  const writeMeta = (patch: Partial<WorkflowMetadataInput>): Promise<WorkflowMetadata> => {
    const run = metaQueue.then(() => writeMetaNow(patch));
    metaQueue = run.catch(() => undefined);
    return run;
  };
  const writeMetaNow = async (patch: Partial<WorkflowMetadataInput>): Promise<WorkflowMetadata> => {
    assertLock();
    await deps.lock.assertHeld();
    const { schemaVersion: _v, generation, ...rest } = meta;
    const next = dropUndefined({ ...rest, ...patch, updatedAt: iso() }) as WorkflowMetadataInput;
    const w = await deps.store.writeMetadata(deps.slug, next, generation);
    if (!w.ok) throw w.error;
    meta = w.metadata;
    if (w.journalError) deps.reporter.warning(`journal: ${w.journalError.message}`, { id: "journal" });
    return meta;
  };
  const journal = async (event: string, data?: unknown): Promise<void> => {
    assertLock();
    const r = await deps.store.appendJournal(deps.slug, { generation: meta.generation, at: iso(), event, ...(data === undefined ? {} : { data }) });
    // The journal is the history, workflow.json the truth: a journal that cannot take a line is reported, and the
    // run goes on (a damaged journal is kept as it is for a human to look at).
    if (!r.ok) deps.reporter.warning(`journal: ${r.error.message}`, { id: "journal" });
  };
  const checkControl = async (): Promise<void> => {
    assertLock();
    const r = await readControlRequest(deps.runDir);
    if (!r.ok) throw r.error;
    if (r.request === null) return;
    // The request file stays until the lifecycle has written paused/cancelled: a crash in between keeps it.
    const code = r.request.signal === "pause" ? "RUN_PAUSED" : "RUN_STOPPED";
    throw workflowError("run", code, `run ${deps.slug}: ${r.request.signal} requested (${r.request.reason}).`, {
      value: r.request.signal,
      reason: r.request.reason,
      requestedBy: r.request.requestedBy,
      request: r.request,
    });
  };

  // Occurrences per step id in this invocation: the nth `ctx.step("lint", …)` is keyed `lint#n` (n ≥ 2), so a
  // loop over inputs reuses each of its steps on resume instead of re-running all but the last.
  const occurrences = new Map<string, number>();
  const inFlight = new Map<string, AbortController>();
  const stopWatch = createStopWatch(deps, inFlight);

  const step = async <T extends StepValue>(id: string, input: unknown, fn: StepFn<T>, options: StepOptions = {}): Promise<StepResult<T>> => {
    // Everything up to the first await runs synchronously, so parallel calls get their keys in call order.
    const n = (occurrences.get(id) ?? 0) + 1;
    occurrences.set(id, n);
    const key = n === 1 ? id : `${id}#${n}`;
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
    const inputFp = fingerprint(input);
    for (let tryNo = 0; ; tryNo++) {
      const previous = await deps.checkpoints.record(key);
      if (previous !== undefined && previous.status !== "completed" && previous.attempt >= deps.maxAttempts && previous.inputFingerprint === inputFp) {
        throw workflowError("run", "MAX_ATTEMPTS_REACHED", `step ${key} of run ${deps.slug} already failed ${previous.attempt} time(s) (maxAttempts ${deps.maxAttempts}).`, {
          field: "maxAttempts",
          value: deps.maxAttempts,
          stepId: key,
          hint: "fix the cause of the failure, then raise maxAttempts or start a new run",
        });
      }
      try {
        return (await attemptStep(key, input, fn, opts)) as StepResult<T>;
      } catch (error) {
        if (tryNo >= opts.retries || !retryable(error) || deps.lock.signal.aborted || stopWatch.stopped() !== null) throw error;
        const wait = Math.min(opts.maxBackoffMs, opts.backoffMs * 2 ** tryNo);
        deps.reporter.warning(`${key}: attempt failed (${error instanceof Error ? error.message : String(error)}); retrying in ${wait} ms`, { id: `step:${key}` });
        await sleep(wait, undefined, { signal: deps.lock.signal }).catch(() => {
          throw lockLost(deps);
        });
        await checkControl();
      }
    }
  };

  const attemptStep = async <T extends StepValue>(key: string, input: unknown, fn: StepFn<T>, opts: Required<StepOptions>): Promise<unknown> => {
    let wroteStart = false;
    const controller = new AbortController();
    const onLost = () => controller.abort(deps.lock.signal.reason);
    deps.lock.signal.addEventListener("abort", onLost, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const outcome = await deps.checkpoints
      .step(key, input, async (attempt) => {
        await writeMeta({ currentStepId: key });
        wroteStart = true;
        inFlight.set(key, controller);
        stopWatch.start();
        const timedOut = new Promise<never>((_, reject) => {
          if (opts.timeoutMs === 0) return;
          timer = setTimeout(() => {
            const e = workflowError("run", "STEP_TIMEOUT", `step ${key} of run ${deps.slug} ran longer than ${opts.timeoutMs} ms; its signal was aborted.`, {
              stepId: key,
              value: opts.timeoutMs,
              hint: "raise timeoutMs for this step, or make fn honour its signal sooner",
            });
            controller.abort(e);
            reject(e);
          }, opts.timeoutMs);
        });
        timedOut.catch(() => undefined);
        return Promise.race([Promise.resolve().then(() => fn(controller.signal, attempt)), timedOut]);
      })
      .catch((error: unknown) => {
        // A checkpoint write refused because the lock was lost surfaces as WRITE_FAILED; say what really happened.
        if (deps.lock.signal.aborted) throw lockLost(deps);
        // A step that failed because a stop aborted its signal ends the run cancelled, not failed.
        const stop = stopWatch.stopped();
        throw stop !== null && controller.signal.aborted ? stop : error;
      })
      .finally(() => {
        clearTimeout(timer);
        deps.lock.signal.removeEventListener("abort", onLost);
        inFlight.delete(key);
        stopWatch.settle();
      });
    if (outcome.reused) {
      const why = "completed checkpoint with the same input fingerprint";
      steps.push({ stepId: key, outcome: "reused", why });
      // Killed between the checkpoint and workflow.json: the step is still recorded as in flight; finish that.
      if (meta.currentStepId === key) await writeMeta({ currentStepId: nextInFlight(), lastCompletedStepId: key });
      deps.reporter.report("info", `↺ ${key}: reused (${why})`, { id: `step:${key}` });
      return outcome.output;
    }
    steps.push({ stepId: key, outcome: "ran", reason: outcome.reason, why: WHY[outcome.reason], ...(outcome.movedAside === undefined ? {} : { evidence: outcome.movedAside }) });
    if (outcome.movedAside !== undefined) {
      deps.reporter.warning(`${key}: its stored output was damaged; kept as evidence at ${outcome.movedAside}`, { id: `step:${key}:evidence` });
    }
    if (wroteStart) await writeMeta({ currentStepId: nextInFlight(), lastCompletedStepId: key });
    deps.reporter.report("info", `✓ ${key}`, { id: `step:${key}` });
    return outcome.output;
  };
  const nextInFlight = (): string | undefined => inFlight.keys().next().value;

  const workflow =
    deps.workflow === null
      ? null
      : createWorkflowHandle(deps.workflow.registry, deps.workflow.state, {
          persist: async (state, phase) => void (await writeMeta({ state, ...(phase === undefined ? {} : { phase }) })),
          journal,
          now: () => deps.clock().getTime(),
        });

  const ctx: RunContext = {
    slug: deps.slug,
    runDir: deps.runDir,
    planRoot: deps.planRoot,
    toolName: deps.toolName,
    resumed: deps.resumed,
    signal: deps.lock.signal,
    reporter: deps.reporter,
    checkpoints: deps.checkpoints,
    verificationCache: deps.verificationCache,
    get baseline() {
      return baseline;
    },
    workflow,
    steps,
    metadata: () => meta,
    step,
    checkControl,
    setPhase: async (phase) => {
      if (meta.phase !== phase) await writeMeta({ phase });
    },
    verify: (policy, options = {}) =>
      runVerificationPolicy({
        policy,
        cwd: options.cwd ?? deps.repoRoot,
        tool: deps.toolName,
        phase: meta.phase,
        cache: deps.verificationCache,
        reporter: deps.reporter,
        signal: deps.lock.signal,
        fingerprint: { exclude: [deps.planRoot] },
        ...(options.runCommand ? { runCommand: options.runCommand } : {}),
      }),
  };
  return {
    ctx,
    setBaseline: (v) => (baseline = v),
    writeMeta,
    journal,
    clearControl: (request) => clearControlRequest(deps.runDir, request),
    clearPendingPause: async () => {
      const pending = await readPauseRequest(deps.runDir);
      if (pending.ok && pending.request !== null) await clearControlRequest(deps.runDir, pending.request);
    },
    now: () => deps.clock().getTime(),
  };
}

function lockLost(deps: RunContextDeps): Error {
  const reason: unknown = deps.lock.signal.reason;
  if (isWorkflowError(reason)) return reason;
  return workflowError("run", "LOCK_LOST", `run ${deps.slug} lost its plan lock; stopping before the next write.`, {
    file: deps.runDir,
    hint: "another process took the run over; resume it later",
  });
}

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
