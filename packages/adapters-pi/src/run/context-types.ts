/**
 * The shapes of a run's step context: what the body sees (`RunContext`), what it is built from
 * (`RunContextDeps`) and what the lifecycle keeps of it (`RunContextInternals`). Split from context.ts so the
 * behaviour there reads without 80 lines of declarations in front of it.
 */
import type { WorkflowRegistry, WorkflowState } from "@phasekit/core";
import type { StepFn, StepOptions, StepResult, StepValue } from "./step-options.js";
import type { RunWorkflowHandle } from "./workflow-handle.js";
import type { CheckpointStore, RerunReason } from "../store/checkpoints.js";
import type { ControlRequest } from "./control-signals.js";
import type { PlanStore, StoreLock } from "../store/plan-store.js";
import type { Reporter } from "./reporter.js";
import type { VerificationCache } from "../verification/cache.js";
import type { VerificationPolicy } from "../verification/config.js";
import type { VerificationOutcome } from "../verification/policy.js";
import type { CommandRunner } from "../verification/runner.js";
import type { WorkflowMetadata, WorkflowMetadataInput } from "../store/metadata-schema.js";

/** What happened to one `ctx.step` call in this run. */
export type StepReport =
  | { stepId: string; outcome: "reused"; why: string }
  | { stepId: string; outcome: "ran"; reason: RerunReason; why: string; /** A damaged stored output moved aside here. */ evidence?: string };

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
  /** The latest metadata this run wrote. */
  metadata(): WorkflowMetadata;
  /**
   * Runs `fn` once per input: a completed checkpoint with the same input fingerprint returns its stored output
   * instead. Checks the lock, pause/stop requests and the iteration caps first. `input` and the output must be
   * plain JSON (a step that returns nothing stores and returns null). The nth call with the same `id` in one
   * invocation is keyed `id#n`, so loops and parallel steps (`Promise.all`) are reused on resume when the body
   * calls them in the same order. `fn` gets a signal (aborted on lock loss, a stop request, or `timeoutMs`) and
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
