/**
 * What a `runWorkflow` body works with: checkpointed steps, control checks, the run's metadata and (when the run
 * carries one) its core workflow state. The shape of `ctx` is in context-types.ts; its durable writes (through
 * `writeMeta`, which refuses to write once the lock is lost) in run-io.ts; this file wires them.
 */
import { createStepRunner, type StepReport } from "./step-runner.js";
import type { StepBody, StepOptions } from "./step-options.js";
import { judgeControls, NO_USAGE, resolveActive, type ProgressThresholds, type WorkflowRegistry, type WorkflowState } from "@phasekit/core";
import { persisted } from "./persisted.js";
import { openWorkflowHandle, phaseOf, type HistoryEntries } from "./workflow-handle.js";
import type { CheckpointStore } from "../engine/checkpoint-port.js";
import type { ControlRequest } from "../store/control-signals.js";
import type { PlanStore, StoreLock } from "../store/plan-store.js";
import type { Reporter } from "./reporter.js";
import type { VerificationCache } from "../verification/cache.js";
import { runVerificationPolicy } from "../verification/policy.js";
import type { WorkflowMetadata, WorkflowMetadataInput } from "../store/metadata-schema.js";
import { createRunBudget } from "./budget.js";
import { createWaits } from "./waits.js";
import type { Budgets } from "@phasekit/core";
import type { RunContext } from "./context-types.js";
import { createRunIo } from "./run-io.js";
import { createStepFailureWatch } from "./step-failures.js";

export type { StepReport } from "./step-runner.js";
export type { RunContext } from "./context-types.js";

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
  /** The run's clock, as epoch ms. */
  now(): number;
}

/** Builds the body's context over an acquired lock and the run's current metadata. */
export async function createRunContext(deps: RunContextDeps): Promise<RunContextInternals> {
  let baseline: unknown;
  const steps: StepReport[] = [];
  // The runner is built after the writer (it checks control through it); the writer reads step facts lazily.
  const io = createRunIo(deps, () => ({ currentStepId: runner.inFlight(), lastCompletedStepId: runner.lastCompleted() }));
  const { writeMeta, journal, checkControl } = io;

  const runner = createStepRunner({ deps, checkControl, steps, lockLost: io.lockLost, markSteps: deps.workflow !== null, journal });

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
    const meta = io.meta();
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
  // The thresholds in force where the run is now: core's activeControls (phase over workflow over DEFAULT_PROGRESS).
  const watchFailures = createStepFailureWatch(() => (workflow === null ? undefined : progressAt(workflow.registry, workflow.state())), `run ${deps.slug}`);
  const budget = createRunBudget(deps.budgets, deps.checkpoints, () => deps.clock().getTime(), Date.parse(io.meta().createdAt), `run ${deps.slug}`);

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
    // The runner takes any StepFn; the context's signature adds the compile-time JSON check (StepBody).
    step: <T>(id: string, input: unknown, fn: StepBody<T>, options?: StepOptions) => watchFailures(id, input, () => runner.step<T>(id, input, fn, options)),
    checkControl,
    setPhase: async (phase) => {
      if (io.meta().phase !== phase) await writeMeta({ phase });
    },
    verify: (policy, options = {}) =>
      runVerificationPolicy({
        policy,
        cwd: options.cwd ?? deps.repoRoot,
        tool: deps.toolName,
        phase: io.meta().phase,
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
    clearControl: io.clearControl,
    now: () => deps.clock().getTime(),
  };
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

/** The no-progress thresholds of the phase `state` is at, merged by core (judgeControls → activeControls). */
function progressAt(registry: WorkflowRegistry, state: WorkflowState): ProgressThresholds | undefined {
  const resolved = resolveActive(registry, state);
  if (!resolved.ok || resolved.active === null) return registry.workflows.get(state.workflowKey)?.progress;
  const j = judgeControls(resolved.active, { workflowUsed: NO_USAGE, phaseUsed: NO_USAGE });
  return j.ok ? j.judgement.controls.progress : undefined;
}
