/**
 * What a `runWorkflow` body works with: checkpointed steps, control checks, the run's metadata and (when the run
 * carries one) its core workflow state. Every durable change goes through `writeMeta`, which refuses to write
 * once the lock is lost and relies on workflow.json's generation check for the race that remains.
 */
import { createStepRunner, type StepReport } from "./step-runner.js";
import type { StepFn, StepOptions, StepResult, StepValue } from "./step-options.js";
import { isWorkflowError, workflowError, type WorkflowRegistry, type WorkflowState } from "@phasekit/core";
import { persisted } from "./persisted.js";
import { openWorkflowHandle, phaseOf, type HistoryEntries, type RunWorkflowHandle } from "./workflow-handle.js";
import type { CheckpointStore } from "../store/checkpoint-port.js";
import type { ControlRequest } from "../store/control-signals.js";
import type { PlanStore, StoreLock } from "../store/plan-store.js";
import type { Reporter } from "./reporter.js";
import type { VerificationCache } from "../verification/cache.js";
import type { VerificationPolicy } from "../verification/config.js";
import { runVerificationPolicy, type VerificationOutcome } from "../verification/policy.js";
import type { CommandRunner } from "../verification/runner.js";
import type { WorkflowMetadata, WorkflowMetadataInput } from "../store/metadata-schema.js";
import { createRunBudget, type RunBudget } from "./budget.js";
import { createWaits, type ApprovalOutcome, type WaitForApprovalOptions } from "./waits.js";
import type { Budgets } from "@phasekit/core";

export type { StepReport } from "./step-runner.js";

/** The context a `runWorkflow` body receives. */
export interface RunContext {
  readonly slug: string;
  readonly runDir: string;
  readonly planRoot: string;
  readonly toolName: string;
  /** True when this run continues an earlier one (its completed steps are reused). */
  readonly resumed: boolean;
  /** Aborted when the plan lock is lost; long work should pass it on. */
  readonly signal: AbortSignal;
  readonly reporter: Reporter;
  readonly checkpoints: CheckpointStore;
  readonly verificationCache: VerificationCache;
  /** The value `resolveBaseline` returned (undefined without one). */
  readonly baseline: unknown;
  /** The core workflow of this run, when `options.workflow` was given. */
  readonly workflow: RunWorkflowHandle | null;
  /** Every `step` of this run so far, in order, with why it ran or was reused. */
  readonly steps: readonly StepReport[];
  /**
   * The run's metadata: the latest this run wrote, except while a resumed body replays its recorded dispatches,
   * when `state` and `phase` are the ones the body had at that point (so code that reads them decides as it did).
   */
  metadata(): WorkflowMetadata;
  /**
   * Runs `fn` once per input: a completed checkpoint with the same input fingerprint returns its stored output
   * instead. Checks the lock, pause/stop requests and the iteration caps first. `input` and the output must be
   * plain JSON (a step that returns nothing stores and returns null). The nth call with the same `id` in one
   * invocation is keyed `id#n`, so loops and parallel steps (`Promise.all`) are reused on resume when the body
   * calls them in the same order; a call with the id and input of a step that just failed in this invocation
   * is that step's next attempt (same key), so a retry in a `catch` is not run again on resume. Ids starting
   * with `phasekit:` are reserved. `fn` gets a signal (aborted on lock loss, a stop request, or `timeoutMs`) and
   * the attempt number (1 on the first try; counts across resumes and `retries`).
   */
  step<T extends StepValue>(id: string, input: unknown, fn: StepFn<T>, options?: StepOptions): Promise<StepResult<T>>;
  /** Throws RUN_PAUSED / RUN_STOPPED when another process asked for it, LOCK_LOST when the lock is gone. */
  checkControl(): Promise<void>;
  /** Records the phase the body is in (shown by `analyzeResumeTarget` and the CLI). */
  setPhase(phase: string): Promise<void>;
  /**
   * Runs a verification policy for this run: its cache, tool, current phase, reporter and lock signal, in the
   * repository, with the plan folder left out of the cache key (the run's own writes must not defeat the cache).
   */
  verify(policy: VerificationPolicy, options?: { cwd?: string; runCommand?: CommandRunner }): Promise<VerificationOutcome>;
  /** What the run has spent and has left; spends are history entries, so a resumed run keeps counting (docs/gates.md). */
  readonly budget: RunBudget;
  /**
   * Waits, durably, for a person's decision named `name` (`phasekit approve <run> --name <name> [--data JSON]`, or
   * `requestApproval`): a resumed run continues the same wait (its timeout counts from the first start) and a
   * replayed one gets the recorded decision. A timeout is an outcome, not an error; pause/stop requests still end the run.
   */
  waitForApproval(name: string, options?: WaitForApprovalOptions): Promise<ApprovalOutcome>;
  /** Sleeps `ms`, durably: a run resumed after a crash sleeps only what was left (none if the time has passed). */
  sleep(ms: number): Promise<void>;
}

/** Everything `createRunContext` needs from the lifecycle. */
export interface RunContextDeps {
  store: PlanStore;
  lock: StoreLock;
  slug: string;
  runDir: string;
  planRoot: string;
  repoRoot: string;
  toolName: string;
  resumed: boolean;
  reporter: Reporter;
  checkpoints: CheckpointStore;
  verificationCache: VerificationCache;
  metadata: WorkflowMetadata;
  /** The core workflow the run carries, with the state already started or migrated by the lifecycle. */
  workflow: { registry: WorkflowRegistry; state: WorkflowState } | null;
  clock: () => Date;
  maxSteps: number;
  maxAttempts: number;
  budgets: Budgets;
  waitPollMs: number;
}

/** The context plus the lifecycle's handle on the same metadata writer. */
export interface RunContextInternals {
  ctx: RunContext;
  setBaseline(value: unknown): void;
  writeMeta(patch: Partial<WorkflowMetadataInput>): Promise<WorkflowMetadata>;
  journal(event: string, data?: unknown): Promise<void>;
  /** Removes a honoured pause/stop request (after its effect is on disk), unless a newer one replaced it. */
  clearControl(request: ControlRequest): Promise<void>;
  /** Removes a pending pause request, if any (a stop has ended the run). */
  clearPendingPause(): Promise<void>;
  /** The run's clock, as epoch ms. */
  now(): number;
}


/** Builds the body's context over an acquired lock and the run's current metadata. */
export async function createRunContext(deps: RunContextDeps): Promise<RunContextInternals> {
  let meta = deps.metadata;
  let baseline: unknown;
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
    // Step bookkeeping rides along with every write (steps themselves write only to the run log).
    const stepFacts = { currentStepId: runner.inFlight(), lastCompletedStepId: runner.lastCompleted() ?? rest.lastCompletedStepId };
    const next = dropUndefined({ ...rest, ...stepFacts, ...patch, updatedAt: iso() }) as WorkflowMetadataInput;
    const w = await deps.store.writeMetadata(deps.slug, next, generation);
    if (!w.ok) throw w.error;
    meta = w.metadata;
    if (w.journalError) deps.reporter.warning(`journal: ${w.journalError.message}`, { id: "journal" });
    if (w.snapshotError) deps.reporter.warning(`workflow.json: ${w.snapshotError.message}`, { id: "workflow.json" });
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
    const r = await deps.store.readControl(deps.slug);
    if (!r.ok) throw r.error;
    if (r.request === null) return;
    // The request stays until the lifecycle has written paused/cancelled: a crash in between keeps it.
    const code = r.request.signal === "pause" ? "RUN_PAUSED" : "RUN_STOPPED";
    throw workflowError("run", code, `run ${deps.slug}: ${r.request.signal} requested (${r.request.reason}).`, {
      value: r.request.signal,
      reason: r.request.reason,
      requestedBy: r.request.requestedBy,
      request: r.request,
    });
  };

  const runner = createStepRunner({ deps, checkControl, steps, lockLost: () => lockLost(deps), markSteps: deps.workflow !== null });
  const step = runner.step;

  const opened =
    deps.workflow === null
      ? null
      : await openWorkflowHandle(deps.workflow.registry, deps.workflow.state, {
          history: historyOver(deps.checkpoints),
          persist: async (state, phase) => void (await writeMeta({ state, ...(phase === undefined ? {} : { phase }) })),
          journal,
          now: () => deps.clock().getTime(),
        });
  const workflow = opened?.handle ?? null;
  // While the body replays, it sees the run as it was at that point of its first run.
  const shown = (): WorkflowMetadata => {
    if (opened === null || workflow === null || !opened.replaying()) return meta;
    const state = workflow.state();
    const phase = phaseOf(state, workflow.registry);
    const { phase: _p, ...rest } = meta;
    return { ...rest, state: persisted(state), ...(phase === undefined ? {} : { phase }) };
  };

  const waits = createWaits({
    slug: deps.slug,
    store: deps.store,
    checkpoints: deps.checkpoints,
    reporter: deps.reporter,
    signal: deps.lock.signal,
    now: () => deps.clock().getTime(),
    checkControl,
    journal,
    pollMs: deps.waitPollMs,
  });
  const budget = createRunBudget(deps.budgets, deps.checkpoints, () => deps.clock().getTime(), Date.parse(meta.createdAt), `run ${deps.slug}`);

  const ctx: RunContext = {
    budget,
    waitForApproval: waits.waitForApproval,
    sleep: waits.sleep,
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
    metadata: shown,
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
    clearControl: async (request) => {
      const r = await deps.store.clearControl(deps.slug, request);
      if (!r.ok) throw r.error;
    },
    clearPendingPause: async () => {
      const pending = await deps.store.readControl(deps.slug, "pause");
      if (pending.ok && pending.request !== null) {
        const r = await deps.store.clearControl(deps.slug, pending.request);
        if (!r.ok) throw r.error;
      }
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

/** The checkpoint history as the workflow handle uses it (dispatches and the starting state are entries of it). */
function historyOver(checkpoints: CheckpointStore): HistoryEntries {
  return {
    file: checkpoints.file,
    entry: async (key, input, fn) => {
      const r = await checkpoints.step(key, input, () => fn());
      return { reused: r.reused, output: r.output };
    },
    has: async (key) => (await checkpoints.record(key)) !== undefined,
  };
}

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
