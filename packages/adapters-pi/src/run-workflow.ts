/**
 * `runWorkflow(options, body)`: the one call an extension needs to run a multi-step job that survives crashes,
 * refuses a second concurrent runner and resumes exactly where it stopped. The numbered steps below match
 * docs/run-workflow.md.
 */
import { cancelNow, isWorkflowError, migrateState, pause as pauseState, resolveActive, resume as resumeState, start, workflowError } from "@phasekit/core";
import type { WorkflowError, WorkflowRegistry, WorkflowState } from "@phasekit/core";
import { createCheckpointStore } from "./checkpoint-store.js";
import { nodeFs, type FsPort } from "./fs-port.js";
import { createFsPlanStore, type PlanStore, type StoreLock } from "./plan-store.js";
import { createReporter, type Reporter } from "./reporter.js";
import { judge, type OwnershipClaim } from "./resume-analysis.js";
import { createRunContext, type RunContext, type RunContextInternals, type StepReport } from "./run-context.js";
import { guarded, hookError, reportHookFailure, type HookFailure } from "./run-hooks.js";
import { generateRunId } from "./run-id.js";
import { resolveRunTarget, type PlanRootsOptions, type RunLocation } from "./run-target.js";
import { createRunVerificationCache } from "./verification-cache.js";
import type { WorkflowMetadata, WorkflowMetadataInput } from "./workflow-metadata-schema.js";

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
  target?: string;
  /** The tool running now (recorded as `currentTool`; the owner unless `ownerTool` says otherwise). */
  toolName: string;
  parentSlug?: string;
  worktree?: string;
  branch?: string;
  baseRef?: string;
  /** Lock timing: a holder that stops refreshing for `staleMs` may be taken over; `retries` while busy. */
  lock?: { staleMs?: number; updateMs?: number; retries?: number };
  /** Most `ctx.step` calls one invocation may make (default 10,000). */
  maxSteps?: number;
  /** Most attempts of one step across resumes before the run fails instead of retrying (default 3). */
  maxAttempts?: number;
  /** A core workflow the run carries: started on a new run, restored and persisted in workflow.json. */
  workflow?: { registry: WorkflowRegistry; workflowKey: string; taskDescription: string };
  /** Wall clock (default `new Date()`). */
  clock?: () => Date;
  fs?: FsPort;
  /** Asked before an existing run is resumed; false ends cleanly. Default: resume. */
  promptForResume?: (info: ResumePromptInfo) => boolean | Promise<boolean>;
  /** Told who holds the lock before the LOCKED error is thrown. */
  onLockHeld?: (error: WorkflowError) => unknown;
  createReporter?: (info: { slug: string; runDir: string }) => Reporter;
  resolveBaseline?: (ctx: RunContext) => unknown;
  onSuccess?: (result: T, ctx: RunContext) => unknown;
  onError?: (error: unknown, ctx: RunContext | null) => unknown;
  beforeReporterDispose?: (info: RunCleanupInfo) => unknown;
  afterReporterDispose?: (info: RunCleanupInfo) => unknown;
  afterLockRelease?: (info: RunCleanupInfo) => unknown;
  /** Where hook failures go that cannot be thrown (cleanup hooks); default one stderr line each. */
  onHookFailure?: (failure: HookFailure) => void;
}
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- helpers below read options, never the result type
type AnyOptions = RunWorkflowOptions<any>;

/** The outcome of a run that did not throw. */
export type RunResult<T> =
  | { status: "completed"; result: T; slug: string; runDir: string; metadata: WorkflowMetadata; steps: readonly StepReport[]; hookFailures: HookFailure[] }
  | { status: "paused" | "cancelled"; reason: string; slug: string; runDir: string; metadata: WorkflowMetadata; steps: readonly StepReport[]; hookFailures: HookFailure[] }
  | { status: "declined"; slug: string; runDir: string; metadata: WorkflowMetadata; hookFailures: HookFailure[] };

const DEFAULT_MAX_STEPS = 10_000;
const DEFAULT_MAX_ATTEMPTS = 3;

/**
 * Runs `body` as a durable, resumable run of a plan folder. Resolves with how it ended (completed, paused,
 * cancelled, declined); rejects with the body's own error (after marking the run failed), LOCKED,
 * OWNED_BY_OTHER, a CORRUPT_FILE of workflow.json, or HOOK_FAILED when `onSuccess` threw.
 */
export async function runWorkflow<T>(options: RunWorkflowOptions<T>, body: (ctx: RunContext) => Promise<T>): Promise<RunResult<T>> {
  const opts = checkOptions(options);
  const clock = options.clock ?? (() => new Date());
  // 1. Resolve the target to a plan folder.
  const location = await locate(options);
  const store = createFsPlanStore({ repoRoot: options.repoRoot, planRoot: location.planRoot, ...(options.fs ? { fs: options.fs } : {}) });
  const hookFailures: HookFailure[] = [];
  const onHookFailure = options.onHookFailure ?? reportHookFailure;
  const note = (f: HookFailure | null): void => {
    if (f === null) return;
    hookFailures.push(f);
    onHookFailure(f);
  };
  let lock: StoreLock | null = null;
  let reporter: Reporter | null = null;
  let status: RunStatus = "refused";
  const info = (): RunCleanupInfo => ({ slug: location.slug, runDir: location.runDir, status });
  try {
    // 2. Take the plan lock.
    const got = await store.lock(location.slug, { owner: { tool: options.toolName }, ...opts.lock });
    if (!got.ok) {
      if (got.error.code === "LOCKED") {
        status = "locked";
        note(await guarded("onLockHeld", location.slug, options.onLockHeld && (() => options.onLockHeld?.(got.error))));
      }
      throw got.error;
    }
    lock = got.lock;
    // 3. Read workflow.json and decide under the lock.
    const analysis = judge(location, await store.readMetadata(location.slug), { ...options, invokedTool: options.toolName });
    if (analysis.kind === "unreadable" || analysis.kind === "owned-by-other") throw analysis.error;
    const existing = analysis.kind === "resumable" ? analysis.metadata : null;
    if (analysis.kind === "resumable") {
      const prompt = options.promptForResume;
      const proceed = prompt === undefined ? true : await prompt({ slug: location.slug, runDir: location.runDir, metadata: analysis.metadata, takeover: analysis.takeover });
      if (!proceed) {
        status = "declined";
        return { status: "declined", slug: location.slug, runDir: location.runDir, metadata: analysis.metadata, hookFailures };
      }
    }
    // 4. Upsert metadata: running, current tool, owner kept (or claimed), earlier facts kept.
    const ownerTool = analysis.kind === "resumable" && !analysis.takeover ? analysis.metadata.ownerTool : (options.ownerTool ?? options.toolName);
    const state = workflowStateFor(options, existing, location.slug, clock);
    const first = await store.writeMetadata(location.slug, upsert(options, location, existing, ownerTool, state, clock), existing?.generation ?? null);
    if (!first.ok) throw first.error;
    // 5. Reporter and the run context.
    reporter = await makeReporter(options, location, store, first.metadata);
    const internals = createRunContext({
      store,
      lock,
      slug: location.slug,
      runDir: location.runDir,
      planRoot: location.planRoot,
      toolName: options.toolName,
      resumed: existing !== null,
      reporter,
      checkpoints: createCheckpointStore({ runDir: location.runDir, now: clock, fs: writesWhileHeld(options.fs ?? nodeFs, lock) }),
      verificationCache: createRunVerificationCache(),
      metadata: first.metadata,
      registry: options.workflow?.registry ?? null,
      clock,
      maxSteps: opts.maxSteps,
      maxAttempts: opts.maxAttempts,
    });
    const { ctx } = internals;
    let result: T;
    try {
      // 6. Baseline, then the body.
      if (options.resolveBaseline) internals.setBaseline(await options.resolveBaseline(ctx));
      result = await body(ctx);
    } catch (error) {
      const ended = await endEarly(internals, error);
      if (ended !== null) {
        status = ended.status;
        return { ...ended, slug: location.slug, runDir: location.runDir, metadata: ctx.metadata(), steps: ctx.steps, hookFailures };
      }
      // 7b. Failure: status failed with the reason, onError, then the original error.
      status = "failed";
      await markFailed(internals, error);
      note(await guarded("onError", location.slug, options.onError && (() => options.onError?.(error, ctx))));
      throw error;
    }
    // 7a. Success: onSuccess, then completed. A throwing onSuccess is its own HOOK_FAILED error.
    const hook = await guarded("onSuccess", location.slug, options.onSuccess && (() => options.onSuccess?.(result, ctx)));
    await internals.writeMeta({ status: "completed", currentStepId: undefined, failureReason: undefined });
    status = "completed";
    if (hook !== null) {
      hookFailures.push(hook);
      throw hook.error;
    }
    return { status: "completed", result, slug: location.slug, runDir: location.runDir, metadata: ctx.metadata(), steps: ctx.steps, hookFailures };
  } finally {
    // 8. Cleanup, always and in order; one failure never skips the next step.
    note(await guarded("beforeReporterDispose", location.slug, options.beforeReporterDispose && (() => options.beforeReporterDispose?.(info()))));
    note(await guarded("reporterDispose", location.slug, reporter === null ? undefined : () => reporter?.dispose()));
    note(await guarded("afterReporterDispose", location.slug, options.afterReporterDispose && (() => options.afterReporterDispose?.(info()))));
    note(await guarded("lockRelease", location.slug, lock === null ? undefined : () => releaseOrThrow(lock as StoreLock)));
    await store.close().catch(() => undefined);
    note(await guarded("afterLockRelease", location.slug, options.afterLockRelease && (() => options.afterLockRelease?.(info()))));
  }
}

/** Pause and stop requests end the run without failing it; anything else is left to the failure path. */
async function endEarly(internals: RunContextInternals, error: unknown): Promise<{ status: "paused" | "cancelled"; reason: string } | null> {
  if (!isWorkflowError(error) || (error.code !== "RUN_PAUSED" && error.code !== "RUN_STOPPED")) return null;
  const reason = typeof error.details.reason === "string" ? error.details.reason : error.message;
  const now = { now: Date.parse(internals.ctx.metadata().updatedAt) };
  const core = internals.ctx.workflow?.state();
  if (error.code === "RUN_PAUSED") {
    const moved = core ? pauseState(core, now) : null;
    await internals.writeMeta({ status: "paused", ...(moved?.ok ? { state: moved.state } : {}) });
    await internals.journal("paused", { reason });
    return { status: "paused", reason };
  }
  const moved = core ? cancelNow(core, now) : null;
  await internals.writeMeta({ status: "cancelled", failureReason: reason, currentStepId: undefined, ...(moved?.ok ? { state: moved.state } : {}) });
  await internals.journal("stopped", { reason });
  return { status: "cancelled", reason };
}

/** Records the failure, unless the lock is gone: then nothing may be written, and the new holder owns the file. */
async function markFailed(internals: RunContextInternals, error: unknown): Promise<void> {
  if (isWorkflowError(error, "LOCK_LOST") || internals.ctx.signal.aborted) return;
  const reason = error instanceof Error ? error.message : String(error);
  try {
    await internals.writeMeta({ status: "failed", failureReason: reason.slice(0, 10_000) });
  } catch {
    // The original error matters more than a failed status write; resume still works from the checkpoints.
  }
}

/** `createReporter`, or the headless default; a throwing factory fails the run (status failed) as HOOK_FAILED. */
async function makeReporter(options: AnyOptions, location: RunLocation, store: PlanStore, metadata: WorkflowMetadata): Promise<Reporter> {
  const factory = options.createReporter;
  if (factory === undefined) return createReporter({ headless: true });
  try {
    return factory({ slug: location.slug, runDir: location.runDir });
  } catch (cause) {
    const error = hookError("createReporter", location.slug, cause);
    const { schemaVersion: _v, generation, ...rest } = metadata;
    await store.writeMetadata(location.slug, { ...rest, status: "failed", failureReason: error.message }, generation).catch(() => undefined);
    throw error;
  }
}

async function releaseOrThrow(lock: StoreLock): Promise<void> {
  const r = await lock.release();
  if (!r.ok) throw r.error;
}

async function locate(options: AnyOptions): Promise<RunLocation> {
  const roots = { ...options, target: options.target ?? "" };
  if (options.target !== undefined) {
    const r = await resolveRunTarget(roots);
    if (r.kind === "invalid" || r.kind === "ambiguous") throw r.error;
    return r.location;
  }
  // A run without a target gets a fresh 8-character id, checked against every plan root.
  const id = await generateRunId(async (candidate) => (await resolveRunTarget({ ...options, target: candidate })).kind !== "new");
  const r = await resolveRunTarget({ ...options, target: id });
  return r.kind === "new" || r.kind === "found" ? r.location : Promise.reject(r.error);
}

function workflowStateFor(options: AnyOptions, existing: WorkflowMetadata | null, slug: string, clock: () => Date): WorkflowState | undefined {
  const wf = options.workflow;
  if (wf === undefined) return undefined;
  const now = { now: clock().getTime() };
  if (existing?.state !== undefined) {
    const migrated = migrateState(existing.state);
    if (!migrated.ok) throw migrated.error;
    const resumed = migrated.state.status === "paused" ? resumeState(migrated.state, now) : null;
    return resumed?.ok ? resumed.state : migrated.state;
  }
  const started = start(wf.registry, { workflowKey: wf.workflowKey, taskId: slug, taskDescription: wf.taskDescription }, now);
  if (!started.ok) throw started.error;
  return started.state;
}

function upsert(
  options: AnyOptions,
  location: RunLocation,
  existing: WorkflowMetadata | null,
  ownerTool: string,
  state: WorkflowState | undefined,
  clock: () => Date,
): WorkflowMetadataInput {
  const now = clock().toISOString();
  const keep = <K extends keyof WorkflowMetadata>(key: K, given: WorkflowMetadata[K] | undefined): Partial<WorkflowMetadataInput> =>
    (given ?? existing?.[key]) === undefined ? {} : ({ [key]: given ?? existing?.[key] } as Partial<WorkflowMetadataInput>);
  return {
    slug: location.slug,
    ownerTool,
    currentTool: options.toolName,
    status: "running",
    createdAt: existing?.createdAt ?? now,
    updatedAt: now,
    ...keep("phase", state === undefined ? undefined : phaseOf(state, options.workflow?.registry)),
    ...keep("currentStepId", undefined),
    ...keep("lastCompletedStepId", undefined),
    ...keep("parentSlug", options.parentSlug),
    ...keep("worktree", options.worktree),
    ...keep("branch", options.branch),
    ...keep("baseRef", options.baseRef),
    ...(state === undefined ? {} : { state }),
  };
}

/** The id of the phase a core state sits on (undefined once it has finished). */
function phaseOf(state: WorkflowState, registry: WorkflowRegistry | undefined): string | undefined {
  if (registry === undefined) return undefined;
  const active = resolveActive(state, registry);
  return active.ok ? active.active.phase.id : undefined;
}

function checkOptions(options: AnyOptions): { maxSteps: number; maxAttempts: number; lock: { staleMs?: number; updateMs?: number; retries?: number } } {
  const bad = (field: string, value: unknown, hint: string): WorkflowError =>
    workflowError("run", "INVALID_OPTIONS", `runWorkflow option ${field} is invalid: ${JSON.stringify(value) ?? "undefined"}.`, { field, value, hint });
  if (typeof options.toolName !== "string" || options.toolName.trim() === "") throw bad("toolName", options.toolName, "pass the name of the tool running the workflow");
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;
  if (!Number.isInteger(maxSteps) || maxSteps < 1) throw bad("maxSteps", options.maxSteps, "pass a positive integer");
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw bad("maxAttempts", options.maxAttempts, "pass an integer ≥ 1");
  return { maxSteps, maxAttempts, lock: options.lock ?? {} };
}

/**
 * The checkpoint log has no generation check: a holder that overslept a step (SIGSTOP, laptop lid) and wakes
 * after another process took the run over would append its late `completed` record over the new holder's.
 * Every checkpoint write first asks the lock whether it is still held (refresh age and holder file).
 */
function writesWhileHeld(fs: FsPort, lock: StoreLock): FsPort {
  return {
    ...fs,
    open: async (file, flags, mode) => (flags === "r" ? fs.open(file, flags, mode) : (await lock.assertHeld(), fs.open(file, flags, mode))),
    rename: async (from, to) => (await lock.assertHeld(), fs.rename(from, to)),
    appendFile: async (file, data, opts) => (await lock.assertHeld(), fs.appendFile(file, data, opts)),
  };
}
