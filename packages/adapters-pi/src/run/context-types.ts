/**
 * The shape of what a `runWorkflow` body works with (built by context.ts). Kept apart from the wiring so that the
 * public contract of `ctx` reads in one place.
 */
import type { StepReport } from "./step-runner.js";
import type { StepBody, StepOptions, StepResult } from "./step-options.js";
import type { RunWorkflowHandle } from "./workflow-handle.js";
import type { CheckpointStore } from "../engine/checkpoint-port.js";
import type { Reporter } from "./reporter.js";
import type { VerificationCache } from "../verification/cache.js";
import type { VerificationPolicy } from "../verification/config.js";
import type { VerificationOutcome } from "../verification/policy.js";
import type { CommandRunner } from "../verification/runner.js";
import type { WorkflowMetadata } from "../store/metadata-schema.js";
import type { RunBudget } from "./budget.js";
import type { ApprovalOutcome, WaitForApprovalOptions } from "./waits.js";

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
   * the attempt number (1 on the first try; counts across resumes and `retries`). Its type is the JSON form of
   * what `fn` returns: an interface or a readonly array is fine; a Date, a function or a class instance is a
   * compile error that names the field.
   */
  step<T>(id: string, input: unknown, fn: StepBody<T>, options?: StepOptions): Promise<StepResult<T>>;
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
