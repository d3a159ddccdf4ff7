/** Steps 1 and 4 of `runWorkflow`: where the run lives, its options, and the metadata it starts with. */
import { migrateState, refusalToError, resume as resumeState, start, workflowError } from "@phasekit/core";
import { persisted } from "./persisted.js";
import type { Budgets, WorkflowError, WorkflowState } from "@phasekit/core";
import { parseBudgets } from "./budget.js";
import { phaseOf } from "./workflow-handle.js";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { fsErrorCode, nodeFs, type FsPort } from "../io/fs-port.js";
import { syncDir } from "../io/atomic-write.js";
import { DIR_MODE, ensurePrivateDir } from "../io/plan-paths.js";
import { generateRunId, type RandomBytes } from "./id.js";
import type { AnyOptions } from "./options.js";
import type { SettledDefinitions } from "./definitions-change.js";
import { planRootsOf, resolveRunTarget, type PlanRootsOptions, type RunLocation } from "./target.js";
import type { WorkflowMetadata, WorkflowMetadataInput } from "../store/metadata-schema.js";

const DEFAULT_MAX_STEPS = 10_000;
const DEFAULT_MAX_ATTEMPTS = 3;

/** Step 1: the plan folder of the target, or of a new run id (reserved atomically in the first plan root). */
export async function locate(options: AnyOptions): Promise<RunLocation> {
  const fs = options.fs ?? nodeFs;
  await assertRepoRoot(fs, options.repoRoot);
  const roots = { ...options, target: options.target ?? "" };
  // A store shared by machines draws the new id where every machine sees it (PostgreSQL: a unique row).
  const shared = options.target === undefined && options.store?.reserveRun !== undefined ? await options.store.reserveRun() : undefined;
  if (shared !== undefined && !shared.ok) throw shared.error;
  const target = options.target ?? shared?.slug;
  if (target !== undefined) {
    const r = await resolveRunTarget({ ...roots, target });
    if (r.kind === "invalid" || r.kind === "ambiguous") throw r.error;
    return r.location;
  }
  return reserveNewRun(options, fs, randomBytes);
}

/**
 * A fresh run id whose folder this call created: `mkdir` without `recursive` fails with EEXIST when the folder
 * exists, so two runs that draw the same id can never share a folder (an exists-then-mkdir check could).
 * Ids present under another plan root are skipped too. The plan root is fsynced so the new folder survives a power cut.
 */
export async function reserveNewRun(options: PlanRootsOptions, fs: FsPort, random: RandomBytes): Promise<RunLocation> {
  const planRoot = planRootsOf(options)[0] as string;
  await ensurePrivateDir(planRoot, { fs });
  let reserved: RunLocation | undefined;
  await generateRunId(async (candidate) => {
    if ((await resolveRunTarget({ ...options, fs, target: candidate })).kind !== "new") return true;
    const runDir = path.join(planRoot, candidate);
    try {
      await fs.mkdir(runDir, { mode: DIR_MODE });
    } catch (error) {
      if (fsErrorCode(error) === "EEXIST") return true;
      throw workflowError("run", "WRITE_FAILED", `cannot create the run folder ${runDir}: ${String(error)}`, { file: runDir }, error);
    }
    reserved = { planRoot, slug: candidate, runDir };
    return false;
  }, random);
  await syncDir(fs, planRoot);
  return reserved as RunLocation;
}

/** A repoRoot that does not exist is refused, never created. */
async function assertRepoRoot(fs: FsPort, repoRoot: string): Promise<void> {
  const st = typeof repoRoot === "string" && repoRoot !== "" ? await fs.stat(repoRoot).catch(() => null) : null;
  if (st === null || !st.isDirectory()) {
    throw workflowError("run", "NOT_FOUND", `repoRoot ${JSON.stringify(repoRoot)} is not an existing folder; phasekit does not create it.`, {
      field: "repoRoot",
      value: repoRoot,
      hint: "pass the absolute path of the repository",
    });
  }
}

/** The core state a run carries: started for a new run, migrated (and resumed if paused) for an existing one. */
export function workflowStateFor(options: AnyOptions, existing: WorkflowMetadata | null, slug: string, clock: () => Date, settled?: SettledDefinitions): WorkflowState | undefined {
  const wf = options.workflow;
  if (wf === undefined) return undefined;
  const now = { now: clock().getTime() };
  if (existing?.state !== undefined) {
    // A run whose definitions changed goes on as settled (definitions-change.ts): kept, moved, restarted, cancelled.
    const registry = settled?.registry ?? wf.registry;
    let state = settled?.decision?.state;
    if (state === undefined) {
      const migrated = migrateState(existing.state);
      if (!migrated.ok) throw refusalToError(migrated.error);
      state = migrated.state;
    }
    const resumed = state.status === "paused" ? resumeState(registry, state, now) : null;
    // An older writer may have stored an armed cancel: a new run never starts half-way through a cancel.
    return persisted(resumed?.ok ? resumed.state : state);
  }
  const started = start(wf.registry, { workflowKey: wf.workflowKey, taskId: slug, taskDescription: wf.taskDescription }, now);
  if (!started.ok) throw refusalToError(started.error);
  return persisted(started.state);
}

/** Step 4: the metadata a run starts with; facts of an existing run are kept unless the options replace them. */
export function upsert(
  options: AnyOptions,
  location: RunLocation,
  existing: WorkflowMetadata | null,
  ownerTool: string,
  state: WorkflowState | undefined,
  clock: () => Date,
  registry = options.workflow?.registry,
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
    ...keep("phase", state === undefined || registry === undefined ? undefined : phaseOf(state, registry)),
    ...keep("currentStepId", undefined),
    ...keep("lastCompletedStepId", undefined),
    ...keep("parentSlug", options.parentSlug),
    ...keep("worktree", options.worktree),
    ...keep("branch", options.branch),
    ...keep("baseRef", options.baseRef),
    ...(state === undefined ? {} : { state }),
  };
}

/** Checks the options at once (INVALID_OPTIONS naming the field) and fills in the defaults. */
export function checkOptions(options: AnyOptions): { maxSteps: number; maxAttempts: number; lock: { staleMs?: number; updateMs?: number; retries?: number }; budgets: Budgets; waitPollMs: number } {
  const bad = (field: string, value: unknown, hint: string): WorkflowError =>
    workflowError("run", "INVALID_OPTIONS", `runWorkflow option ${field} is invalid: ${JSON.stringify(value) ?? "undefined"}.`, { field, value, hint });
  if (typeof options.toolName !== "string" || options.toolName.trim() === "") throw bad("toolName", options.toolName, "pass the name of the tool running the workflow");
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;
  if (!Number.isInteger(maxSteps) || maxSteps < 1) throw bad("maxSteps", options.maxSteps, "pass a positive integer");
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw bad("maxAttempts", options.maxAttempts, "pass an integer ≥ 1");
  const waitPollMs = options.waitPollMs ?? 500;
  if (typeof waitPollMs !== "number" || !Number.isFinite(waitPollMs) || waitPollMs < 1) throw bad("waitPollMs", options.waitPollMs, "pass a number of ms ≥ 1");
  // The carried workflow's own budgets apply unless the caller passes others (e.g. raised ones on resume).
  const own = options.workflow?.registry.workflows.get(options.workflow.workflowKey)?.budgets;
  const budgets = parseBudgets(options.budgets ?? own);
  return { maxSteps, maxAttempts, lock: options.lock ?? {}, budgets, waitPollMs };
}
