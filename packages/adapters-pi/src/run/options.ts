/** The options and results of `runWorkflow` (its public types). */
import type { BudgetsSchema, WorkflowError, WorkflowRegistry } from "@phasekit/core";
import type { z } from "zod";
import type { FsPort } from "../io/fs-port.js";
import type { Reporter } from "./reporter.js";
import type { OwnershipClaim } from "./resume-analysis.js";
import type { RunContext, StepReport } from "./context.js";
import type { HookFailure } from "./hooks.js";
import type { PlanRootsOptions } from "./target.js";
import type { WorkflowMetadata } from "../store/metadata-schema.js";
import type { PlanStore } from "../store/plan-store.js";
import type { OnDefinitionsChanged } from "./definitions-change.js";

/** Budget limits as a caller writes them (core's BudgetsSchema input: onExhausted may be left out). */
export type BudgetsInput = z.input<typeof BudgetsSchema>;

/** What `promptForResume` is shown. */
export interface ResumePromptInfo {
  slug: string;
  runDir: string;
  metadata: WorkflowMetadata;
  takeover: boolean;
}

/** Facts the cleanup hooks receive: what the run got to. */
export interface RunCleanupInfo {
  slug: string;
  runDir: string;
  status: RunStatus;
}

/** How a run ended, as `runWorkflow` reports it. */
export type RunStatus = "completed" | "paused" | "cancelled" | "failed" | "declined" | "locked" | "refused";

/** Options of `runWorkflow`. Only `repoRoot` and `toolName` are required. */
export interface RunWorkflowOptions<T> extends PlanRootsOptions, Omit<OwnershipClaim, "invokedTool"> {
  /** Slug, relative or absolute path of the plan folder; a new 8-character run id when absent. */
  target?: string | undefined;
  /** The tool running now (recorded as `currentTool`; the owner unless `ownerTool` says otherwise). */
  toolName: string;
  parentSlug?: string | undefined;
  worktree?: string | undefined;
  branch?: string | undefined;
  baseRef?: string | undefined;
  /** Lock timing: a holder that stops refreshing for `staleMs` may be taken over; `retries` while busy. */
  lock?: { staleMs?: number | undefined; updateMs?: number | undefined; retries?: number | undefined } | undefined;
  /**
   * Re-enter a finished run (completed or cancelled): its completed steps are reused and it runs again. Without
   * it a finished run is refused with RUN_FINISHED, so a final state stays final. A failed run is resumable
   * without it (fix the cause, run again). Default false.
   */
  reenter?: boolean | undefined;
  /** Most `ctx.step` calls one invocation may make (default 10,000). */
  maxSteps?: number | undefined;
  /** Most attempts of one step across resumes before the run fails instead of retrying (default 3). */
  maxAttempts?: number | undefined;
  /** A core workflow the run carries: started on a new run, restored and persisted in workflow.json. */
  workflow?: { registry: WorkflowRegistry; workflowKey: string; taskDescription: string } | undefined;
  /**
   * Limits on what the body spends (`ctx.budget`; docs/gates.md): turns, toolCalls, tokens, cost it reports, and
   * wallTimeMs since the run was created; `onExhausted` pause (default) or fail. Default: the carried workflow's
   * own `budgets`, else none. A run paused by its budget resumes with a raised one passed here.
   */
  budgets?: BudgetsInput | undefined;
  /** How often `ctx.waitForApproval` and `ctx.sleep` look for a decision or a control request (ms, default 500). */
  waitPollMs?: number | undefined;
  /** Wall clock (default `new Date()`). */
  clock?: (() => Date) | undefined;
  fs?: FsPort | undefined;
  /**
   * Where runs are kept: metadata, journal, lock and checkpoints (default: the plan folder on disk, through
   * `fs`). Another backend (e.g. `@phasekit/store-postgres`) passes the same contract suite. The caller owns it:
   * runWorkflow never closes a store it was given.
   */
  store?: PlanStore | undefined;
  /**
   * Asked when a resumed run's definitions differ from `workflow.registry` (the run records the ones it started
   * with): `change` holds core's diff by phase id and the choices that work for it. Answer `keep` (go on with the
   * pinned definitions), `move` (the new ones at the same phase, where it still exists), `restart-scope` (restart
   * the current scope with the new ones) or `cancel` (the run ends cancelled, the body does not run). Default:
   * keep; a run with no pinned copy (recorded before pins existed) is refused with DEFINITIONS_CHANGED.
   */
  onDefinitionsChanged?: OnDefinitionsChanged | undefined;
  /** Asked before an existing run is resumed; false ends cleanly. Default: resume. */
  promptForResume?: ((info: ResumePromptInfo) => boolean | Promise<boolean>) | undefined;
  /** Told who holds the lock before the LOCKED error is thrown. */
  onLockHeld?: ((error: WorkflowError) => unknown) | undefined;
  createReporter?: ((info: { slug: string; runDir: string }) => Reporter) | undefined;
  resolveBaseline?: ((ctx: RunContext) => unknown) | undefined;
  onSuccess?: ((result: T, ctx: RunContext) => unknown) | undefined;
  onError?: ((error: unknown, ctx: RunContext | null) => unknown) | undefined;
  beforeReporterDispose?: ((info: RunCleanupInfo) => unknown) | undefined;
  afterReporterDispose?: ((info: RunCleanupInfo) => unknown) | undefined;
  afterLockRelease?: ((info: RunCleanupInfo) => unknown) | undefined;
  /** Where hook failures go that cannot be thrown (cleanup hooks); default one stderr line each. */
  onHookFailure?: ((failure: HookFailure) => void) | undefined;
}
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- helpers below read options, never the result type
export type AnyOptions = RunWorkflowOptions<any>;

/** The outcome of a run that did not throw. */
export type RunResult<T> =
  | { status: "completed"; result: T; slug: string; runDir: string; metadata: WorkflowMetadata; steps: readonly StepReport[]; hookFailures: HookFailure[] }
  | { status: "paused" | "cancelled" | "failed"; reason: string; slug: string; runDir: string; metadata: WorkflowMetadata; steps: readonly StepReport[]; hookFailures: HookFailure[] }
  | { status: "declined"; slug: string; runDir: string; metadata: WorkflowMetadata; hookFailures: HookFailure[] };

