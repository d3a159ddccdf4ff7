/**
 * `runWorkflow(options, body)`: the one call an extension needs to run a multi-step job that survives crashes,
 * refuses a second concurrent runner and resumes exactly where it stopped. The numbered steps below match
 * docs/run-workflow.md.
 */
import { cancelNow, isWorkflowError, pause as pauseState } from "@phasekit/core";
import { persisted } from "./persisted.js";
import type { ControlRequest } from "../store/control-signals.js";
import type { AnyOptions, RunCleanupInfo, RunResult, RunStatus, RunWorkflowOptions } from "./options.js";
import { checkOptions, locate, upsert, workflowStateFor } from "./setup.js";
import { createFsPlanStore, type PlanStore, type StoreLock } from "../store/plan-store.js";
import { createReporter, type Reporter } from "./reporter.js";
import { FINISHED_STATUSES, finishedError, judge } from "./resume-analysis.js";
import { createRunContext, type RunContext, type RunContextInternals } from "./context.js";
import { guarded, hookError, reportHookFailure, type HookFailure } from "./hooks.js";
import type { RunLocation } from "./target.js";
import { createRunVerificationCache } from "../verification/cache.js";
import { controlForRun } from "./control-requests.js";
import type { WorkflowMetadata } from "../store/metadata-schema.js";
import { storableText } from "../engine/step-error.js";
import { historyWithPin, settleDefinitions } from "./definitions-change.js";
import { endRun } from "./run-end.js";


/**
 * Runs `body` as a durable, resumable run of a plan folder. Resolves with how it ended (completed, paused,
 * cancelled, declined); rejects with the body's own error (after marking the run failed), LOCKED,
 * OWNED_BY_OTHER, a CORRUPT_FILE of workflow.json, HOOK_FAILED when `onSuccess` threw, or DEFINITIONS_CHANGED
 * when a resumed run's definitions changed and it can neither keep its pinned ones nor was told what to do.
 */
export async function runWorkflow<T>(options: RunWorkflowOptions<T>, body: (ctx: RunContext) => Promise<T>): Promise<RunResult<T>> {
  const opts = checkOptions(options);
  const clock = options.clock ?? (() => new Date());
  // 1. Resolve the target to a plan folder.
  const location = await locate(options);
  let store: PlanStore = options.store ?? createFsPlanStore({ repoRoot: options.repoRoot, planRoot: location.planRoot, ...(options.fs ? { fs: options.fs } : {}) });
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
    // From here on the run writes as this lock's holder: fencing belongs to the lease, not to the store object
    // (two runs of one slug through one store must not write under each other's epoch).
    store = got.lock.store ?? store;
    // 3. Read workflow.json and decide under the lock.
    const analysis = judge(location, await store.readMetadata(location.slug), { ...options, invokedTool: options.toolName });
    if (analysis.kind === "unreadable" || analysis.kind === "owned-by-other") throw analysis.error;
    if (analysis.kind === "resumable" && FINISHED_STATUSES.has(analysis.status) && options.reenter !== true) {
      status = "refused";
      throw finishedError(location.slug, analysis.status, "running it again", "pass reenter: true to run a finished run again (its completed steps are reused), or start a new run");
    }
    const existing = analysis.kind === "resumable" ? analysis.metadata : null;
    if (analysis.kind === "resumable") {
      const prompt = options.promptForResume;
      const proceed = prompt === undefined ? true : await prompt({ slug: location.slug, runDir: location.runDir, metadata: analysis.metadata, takeover: analysis.takeover });
      if (!proceed) {
        status = "declined";
        return { status: "declined", slug: location.slug, runDir: location.runDir, metadata: analysis.metadata, hookFailures };
      }
    }
    // Requests filed before the run's last end that the end made moot belong to it, never to this run (control-requests.ts).
    const control = await controlForRun(store, location.slug, existing === null ? null : { status: existing.status, generation: existing.generation });
    // 4. Upsert metadata: running, current tool, owner kept (or claimed), earlier facts kept.
    const ownerTool = analysis.kind === "resumable" && !analysis.takeover ? analysis.metadata.ownerTool : (options.ownerTool ?? options.toolName);
    // 3b. Definitions changed under a resumed run: it goes on as onDefinitionsChanged chose, never moved silently.
    const history = () => store.checkpoints(location.slug, { now: clock });
    const settled = options.workflow && (await settleDefinitions(options.workflow, existing, location, history, options.onDefinitionsChanged, clock().getTime(), (record) => store.readStepOutput?.(location.slug, record) ?? Promise.resolve(undefined)));
    const state = workflowStateFor(options, existing, location.slug, clock, settled);
    if (settled?.decision?.choice === "cancel" && state !== undefined) {
      const reason = `the definitions changed and onDefinitionsChanged chose cancel:\n${settled.decision.change.text}`;
      let ended: WorkflowMetadata | undefined;
      await endRun({ store, slug: location.slug, status: "cancelled", history }, async () => {
        const w = await store.writeMetadata(location.slug, { ...upsert(options, location, existing, ownerTool, state, clock, settled.registry), status: "cancelled", failureReason: reason }, existing?.generation ?? null);
        if (!w.ok) throw w.error;
        ended = w.metadata;
        return true;
      });
      status = "cancelled";
      return { status: "cancelled", reason, slug: location.slug, runDir: location.runDir, metadata: ended as WorkflowMetadata, steps: [], hookFailures };
    }
    const first = await store.writeMetadata(location.slug, upsert(options, location, existing, ownerTool, state, clock, settled?.registry), existing?.generation ?? null);
    if (!first.ok) throw first.error;
    // 5. Reporter and the run context.
    try {
      reporter = await makeReporter(options, location, store, first.metadata);
    } catch (error) {
      status = "failed";
      note(await guarded("onError", location.slug, options.onError && (() => options.onError?.(error, null))));
      throw error;
    }
    const internals = await createRunContext({
      store: control,
      lock,
      slug: location.slug,
      runDir: location.runDir,
      planRoot: location.planRoot,
      repoRoot: options.repoRoot,
      toolName: options.toolName,
      resumed: existing !== null,
      reporter,
      // The store fences its own writes: the fs store's run log by epoch, PostgreSQL's rows by lease.
      // The run's history, holding the pin of the definitions the run goes on with (definitions-pin.ts).
      checkpoints: settled !== undefined && state !== undefined ? await historyWithPin(await history(), state, settled) : await history(),
      verificationCache: createRunVerificationCache(),
      metadata: first.metadata,
      workflow: settled !== undefined && state !== undefined ? { registry: settled.registry, state } : null,
      clock,
      maxSteps: opts.maxSteps,
      maxAttempts: opts.maxAttempts,
      budgets: opts.budgets,
      waitPollMs: opts.waitPollMs,
    }).catch(async (error: unknown) => {
      // The history could not be opened (damaged, or the lock lost): the run is not left "running".
      status = "failed";
      if (!isWorkflowError(error, "LOCK_LOST")) await writeFailed(store, location.slug, first.metadata, error instanceof Error ? error.message : String(error));
      throw error;
    });
    const { ctx } = internals;
    if (settled?.decision !== undefined) await internals.journal("definitions-changed", { choice: settled.decision.choice, diff: settled.decision.change.diff });
    let result: T;
    try {
      // 6. Baseline, then the body.
      if (options.resolveBaseline) internals.setBaseline(await options.resolveBaseline(ctx));
      result = await body(ctx);
    } catch (error) {
      const ended = await endEarly(store, location.slug, internals, error);
      if (ended !== null) {
        status = ended.status;
        return { ...ended, slug: location.slug, runDir: location.runDir, metadata: ctx.metadata(), steps: ctx.steps, hookFailures };
      }
      // 7b. Failure: status failed with the reason, onError, then the original error.
      status = "failed";
      await markFailed(store, location.slug, internals, error);
      note(await guarded("onError", location.slug, options.onError && (() => options.onError?.(error, ctx))));
      throw error;
    }
    // 7a. Success: onSuccess, then the final status (the core workflow's, when the run carries one). A throwing
    // onSuccess is its own HOOK_FAILED error.
    const hook = await guarded("onSuccess", location.slug, options.onSuccess && (() => options.onSuccess?.(result, ctx)));
    const end = finalStatus(ctx);
    await endRun({ store, slug: location.slug, status: end.status, history: async () => ctx.checkpoints }, async () => {
      await internals.writeMeta({ status: end.status, currentStepId: undefined, failureReason: end.status === "completed" ? undefined : end.reason });
      return true;
    });
    status = end.status;
    if (hook !== null) {
      hookFailures.push(hook);
      throw hook.error;
    }
    const where = { slug: location.slug, runDir: location.runDir, metadata: ctx.metadata(), steps: ctx.steps, hookFailures };
    return end.status === "completed" ? { status: "completed", result, ...where } : { status: end.status, reason: end.reason, ...where };
  } finally {
    // 8. Cleanup, always and in order; one failure never skips the next step.
    note(await guarded("beforeReporterDispose", location.slug, options.beforeReporterDispose && (() => options.beforeReporterDispose?.(info()))));
    note(await guarded("reporterDispose", location.slug, reporter === null ? undefined : () => reporter?.dispose()));
    note(await guarded("afterReporterDispose", location.slug, options.afterReporterDispose && (() => options.afterReporterDispose?.(info()))));
    note(await guarded("lockRelease", location.slug, lock === null ? undefined : () => releaseOrThrow(lock as StoreLock)));
    if (options.store === undefined) await store.close().catch(() => undefined);
    note(await guarded("afterLockRelease", location.slug, options.afterLockRelease && (() => options.afterLockRelease?.(info()))));
  }
}

/**
 * Pause and stop requests end the run without failing it; anything else is left to the failure path. The request
 * file is removed only after the new status is on disk, so a crash in between leaves the request in place; a
 * pause still pending then is moot (endRun).
 */
async function endEarly(store: PlanStore, slug: string, internals: RunContextInternals, error: unknown): Promise<{ status: "paused" | "cancelled"; reason: string } | null> {
  if (!isWorkflowError(error) || (error.code !== "RUN_PAUSED" && error.code !== "RUN_STOPPED")) return null;
  const reason = typeof error.details.reason === "string" ? error.details.reason : error.message;
  const request = error.details.request as ControlRequest | undefined;
  const now = { now: internals.now() };
  const workflow = internals.ctx.workflow;
  const core = workflow?.state();
  const paused = error.code === "RUN_PAUSED";
  const moved = workflow == null || core === undefined ? null : paused ? pauseState(workflow.registry, core, now) : cancelNow(workflow.registry, core, now);
  const state = moved?.ok ? { state: persisted(moved.state) } : {};
  await endRun({ store, slug, status: paused ? "paused" : "cancelled", history: async () => internals.ctx.checkpoints }, async () => {
    await internals.writeMeta(paused ? { status: "paused", ...state } : { status: "cancelled", failureReason: reason, currentStepId: undefined, ...state });
    await internals.journal(paused ? "paused" : "stopped", { reason });
    if (request !== undefined) await internals.clearControl(request);
    return true;
  });
  return { status: paused ? "paused" : "cancelled", reason };
}

/**
 * How a run whose body returned ends. Without a core workflow: completed. With one, workflow.json agrees with
 * core: its status when it has finished, and `paused` (resumable) when the body returned while the workflow
 * still has phases to go.
 */
function finalStatus(ctx: RunContext): { status: "completed" } | { status: "paused" | "cancelled" | "failed"; reason: string } {
  const core = ctx.workflow?.state();
  if (core === undefined || core.status === "completed") return { status: "completed" };
  if (core.status === "cancelled") return { status: "cancelled", reason: "the workflow was cancelled" };
  if (core.status === "failed") return { status: "failed", reason: core.failureReason ?? "the workflow failed" };
  return { status: "paused", reason: `the body returned while workflow ${core.workflowKey} was still ${core.status}` };
}

/** Records the failure, unless the lock is gone: then nothing may be written, and the new holder owns the file. */
async function markFailed(store: PlanStore, slug: string, internals: RunContextInternals, error: unknown): Promise<void> {
  if (isWorkflowError(error, "LOCK_LOST") || internals.ctx.signal.aborted) return;
  const reason = error instanceof Error ? error.message : String(error);
  await endRun({ store, slug, status: "failed", history: async () => internals.ctx.checkpoints }, async () => {
    try {
      await internals.writeMeta({ status: "failed", failureReason: storableText(reason) });
      return true;
    } catch {
      // The original error matters more than a failed status write; resume still works from the checkpoints.
      return false;
    }
  });
}

/** `createReporter`, or the headless default; a throwing factory fails the run (status failed) as HOOK_FAILED. */
async function makeReporter(options: AnyOptions, location: RunLocation, store: PlanStore, metadata: WorkflowMetadata): Promise<Reporter> {
  const factory = options.createReporter;
  if (factory === undefined) return createReporter({ headless: true });
  try {
    return factory({ slug: location.slug, runDir: location.runDir });
  } catch (cause) {
    const error = hookError("createReporter", location.slug, cause);
    await writeFailed(store, location.slug, metadata, error.message);
    throw error;
  }
}

/** Marks a run failed before its context exists (best effort: the error that got here matters more). */
async function writeFailed(store: PlanStore, slug: string, metadata: WorkflowMetadata, reason: string): Promise<void> {
  const { schemaVersion: _v, generation, ...rest } = metadata;
  // No history was opened: nothing to spend.
  await endRun({ store, slug, status: "failed" }, async () => {
    const w = await store.writeMetadata(slug, { ...rest, status: "failed", failureReason: storableText(reason) }, generation).catch(() => undefined);
    return w?.ok === true;
  });
}

async function releaseOrThrow(lock: StoreLock): Promise<void> {
  const r = await lock.release();
  if (!r.ok) throw r.error;
}

