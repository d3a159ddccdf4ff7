/**
 * The run context's durable writes: workflow.json (one write at a time, each from the generation the last one
 * left, refused once the lock is lost), journal lines, and the pause/stop check at step boundaries. Split from
 * context.ts, which wires these into `ctx`.
 */
import { isWorkflowError, workflowError } from "@phasekit/core";
import type { ControlRequest } from "../store/control-signals.js";
import type { PlanStore, StoreLock } from "../store/plan-store.js";
import type { WorkflowMetadata, WorkflowMetadataInput } from "../store/metadata-schema.js";
import type { Reporter } from "./reporter.js";
import { takeRequest } from "./control-requests.js";

/** What the run's writes need from the lifecycle. */
export interface RunIoDeps {
  store: PlanStore;
  lock: StoreLock;
  slug: string;
  runDir: string;
  reporter: Reporter;
  metadata: WorkflowMetadata;
  clock: () => Date;
}

/** Step bookkeeping that rides along with every workflow.json write (steps themselves write only to the run log). */
export interface StepFacts {
  currentStepId: string | undefined;
  lastCompletedStepId: string | undefined;
}

/** The run's write side, over one acquired lock. */
export interface RunIo {
  /** The latest metadata this run wrote (or was given). */
  meta(): WorkflowMetadata;
  writeMeta(patch: Partial<WorkflowMetadataInput>): Promise<WorkflowMetadata>;
  journal(event: string, data?: unknown): Promise<void>;
  /** Throws RUN_PAUSED / RUN_STOPPED when another process asked for it, LOCK_LOST when the lock is gone. */
  checkControl(): Promise<void>;
  clearControl(request: ControlRequest): Promise<void>;
  lockLost(): Error;
}

/** Builds the write side; `stepFacts` is read at each write (the step runner is built after this). */
export function createRunIo(deps: RunIoDeps, stepFacts: () => StepFacts): RunIo {
  let meta = deps.metadata;
  const iso = (): string => deps.clock().toISOString();
  const lockLost = (): Error => lockLostError(deps);
  const assertLock = (): void => {
    if (deps.lock.signal.aborted) throw lockLost();
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
    const facts = stepFacts();
    const steps = { currentStepId: facts.currentStepId, lastCompletedStepId: facts.lastCompletedStepId ?? rest.lastCompletedStepId };
    const next = dropUndefined({ ...rest, ...steps, ...patch, updatedAt: iso() }) as WorkflowMetadataInput;
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
    // A pause is taken before it is acted on (a withdrawal acknowledged meanwhile means the run goes on); a stop
    // stays until the lifecycle has written cancelled: a crash in between keeps it.
    const request = await takeRequest(deps.store, deps.slug, r.request, deps.lock);
    if (request === null) return;
    const code = request.signal === "pause" ? "RUN_PAUSED" : "RUN_STOPPED";
    throw workflowError("run", code, `run ${deps.slug}: ${request.signal} requested (${request.reason}).`, {
      value: request.signal,
      reason: request.reason,
      requestedBy: request.requestedBy,
      request,
    });
  };
  return {
    meta: () => meta,
    writeMeta,
    journal,
    checkControl,
    clearControl: async (request) => {
      const r = await deps.store.clearControl(deps.slug, request);
      if (!r.ok) throw r.error;
    },
    lockLost,
  };
}

function lockLostError(deps: Pick<RunIoDeps, "lock" | "slug" | "runDir">): Error {
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
