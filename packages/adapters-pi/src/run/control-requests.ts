/**
 * `requestPause` / `requestStop` by target (slug or path), for another process or a CLI. The rules live in the
 * store's `requestControl` so every caller and every store applies them: the run must exist; a finished run
 * (completed, cancelled) takes neither request (RUN_FINISHED); a pause needs a run that is running now (status
 * running and a live holder), since a pause left for a crashed run would pause its next resume. A stop is
 * accepted for a running, paused or failed run: its next resume ends cancelled.
 */
import { isWorkflowError, workflowError, type WorkflowError } from "@phasekit/core";
import { isSupersededRequest, withdrawRefusal, type ApprovalDecision, type ControlRequest, type ControlSignal } from "../store/control-signals.js";
import type { PlanStore, StoreLock } from "../store/plan-store.js";
import { FINISHED_STATUSES } from "../store/run-status.js";
import { resolveRunTarget, withPlanRootStore, type PlanRootsOptions } from "./target.js";

/**
 * Which run to signal, and why: a target (slug or path) in the plan roots on disk, or, with `store`, the slug of
 * a run in that store (e.g. a PostgreSQL store, where the run may be held by a process on another machine).
 */
export type ControlTargetOptions = (PlanRootsOptions | { store: PlanStore }) & { target: string; reason?: string | undefined };

/** Asks the run at `target` to pause at its next step boundary (it ends `paused`, resumable). */
export function requestPause(options: ControlTargetOptions): Promise<ControlRequest> {
  return fileRequest(options, "pause");
}

/** Asks the run at `target` to stop (its in-flight step's signal aborts; it ends `cancelled` with the reason). */
export function requestStop(options: ControlTargetOptions): Promise<ControlRequest> {
  return fileRequest(options, "stop");
}

/**
 * Files a person's decision for the run at `target` (a run that waits in `ctx.waitForApproval` or at a phase's
 * approve gate, now or later: the decision waits in the store, across crashes, until the run reads it). The run
 * checks `data` against the wait's schema. Refused for a run that does not exist or has finished.
 */
export function requestApproval(options: ControlTargetOptions & { approval: ApprovalDecision }): Promise<ControlRequest> {
  return fileRequest(options, "approve", options.approval);
}

async function fileRequest(options: ControlTargetOptions, signal: ControlSignal, approval?: ApprovalDecision): Promise<ControlRequest> {
  const reason = options.reason ?? (approval === undefined ? `${signal} requested` : `${approval.decision === "approve" ? "approved" : "rejected"}${approval.name === undefined ? "" : ` (${approval.name})`}`);
  const input = approval === undefined ? { reason } : { reason, approval };
  if ("store" in options) return unwrap(await options.store.requestControl(options.target, signal, input));
  const r = await resolveRunTarget(options);
  if (r.kind === "ambiguous" || r.kind === "invalid") throw r.error;
  return withPlanRootStore(options, r.location.planRoot, async (store) => unwrap(await store.requestControl(r.location.slug, signal, input)));
}

function unwrap(r: { ok: true; request: ControlRequest } | { ok: false; error: unknown }): ControlRequest {
  if (!r.ok) throw r.error;
  return r.request;
}

/**
 * The requests a run's end at `status` leaves without a run to act on, by signal. A pause is for a running run
 * only (one left for a run that is not running would pause its next resume: `requestControl` refuses to file
 * one), so every end written takes the pending pause with it. A stop ends with a run that is finished
 * (completed, cancelled); one filed for a run that ended failed or paused stays, and its next resume ends
 * cancelled (a stop is accepted for such a run). `running` is no end: nothing.
 */
export function signalsEndedBy(status: string): readonly ControlSignal[] {
  if (status === "running") return [];
  return FINISHED_STATUSES.has(status) ? ["stop", "pause"] : ["pause"];
}

/**
 * The store as the runner of one run life sees its requests. `ended` is the status and generation the run had
 * been left at when this run took it (null for a new run). A request of a signal that end made moot
 * (`signalsEndedBy`) filed up to it is superseded (`isSupersededRequest`): cleared now, before the run writes
 * anything (a crash in between leaves the run as it was, and the next run clears them again), and a late one (its
 * filer checked the status before the end and wrote after the end's clearing) is cleared when the runner meets
 * it, never honoured. Every holder of a run sees its requests through this (runWorkflow, the pi extension's hold).
 */
export async function controlForRun(store: PlanStore, slug: string, ended: RunEnded | null): Promise<PlanStore> {
  const view = controlAfter(store, ended);
  if (view === store || ended === null) return store;
  for (const signal of signalsEndedBy(ended.status)) {
    const r = await view.readControl(slug, signal);
    if (!r.ok) throw r.error;
  }
  return view;
}

/** Where a run's last life left it: the status of its last write and that write's generation. */
export interface RunEnded {
  status: string;
  generation: number;
}

/**
 * `controlForRun`'s view without its clearing now: for a holder that has just cleared what its own end made moot
 * (`endRun`, the pi extension ending a run it keeps holding), or one whose clearing failed. A superseded request
 * is still cleared when a read meets it, never returned.
 */
export function controlAfter(store: PlanStore, ended: RunEnded | null): PlanStore {
  const moot = ended === null ? [] : signalsEndedBy(ended.status);
  if (ended === null || moot.length === 0) return store;
  const readControl: PlanStore["readControl"] = async (s, signal) => {
    // Bounded: each turn clears one superseded request; a newer one written meanwhile is read on the next.
    for (let turn = 0; ; turn++) {
      const r = await store.readControl(s, signal);
      if (!r.ok || r.request === null || !moot.includes(r.request.signal) || !isSupersededRequest(r.request, ended.generation)) return r;
      if (turn === 4) return { ok: true, request: null };
      const cleared = await store.clearControl(s, r.request);
      if (!cleared.ok) return cleared;
    }
  };
  // The store itself with this one method in front (a store written as a class keeps its methods and `this`).
  return Object.create(store, { readControl: { value: readControl, enumerable: true } }) as PlanStore;
}

/**
 * Called right after a run's final write made it `status` (run-end.ts `endRun`): every request of a signal that
 * end made moot (`signalsEndedBy`) still pending was filed before that write, so it ends with this run. Clearing
 * is tidiness (`phasekit show` shows no stale request) and covers requests without a generation; the generation
 * rule above is what protects the run's next life, so a failed clear is not an error of the run.
 */
export async function clearEndedRequests(store: PlanStore, slug: string, status: string): Promise<void> {
  for (const signal of signalsEndedBy(status)) {
    const r = await store.readControl(slug, signal);
    if (r.ok && r.request !== null) await store.clearControl(slug, r.request);
  }
}

/**
 * The holder's side of a pending request it is about to act on. A request its filer may withdraw (a pause: see
 * `withdrawRefusal`) is taken first: cleared, compare-and-delete, and honoured only when that very clear removed
 * it. So a withdrawal and the holder's take never both succeed: a pause withdrawn before the take is gone (null:
 * the run goes on, and a newer request is read at the next boundary), and one withdrawn after is told
 * `withdrawn: false`. A pause taken by a holder that then crashes is not honoured by the next run, as a pause
 * filed for a crashed run is refused. A request that cannot be withdrawn is returned as it is: it stays until
 * its effect is recorded, so a crash in between leaves it for the next run.
 *
 * A displaced holder never takes what the run's new holder must see: `lock` is asked before the take, and again
 * after it, since only PostgreSQL fences the clear itself; a pause taken by a holder found displaced then is
 * filed again (same reason and time) for the holder that has the run now, and the LOCK_LOST is thrown; when the
 * store refuses that filing, the error thrown names the request and the refusal (`notHandedOn`): never lost unsaid.
 */
export async function takeRequest(store: PlanStore, slug: string, request: ControlRequest, lock: Pick<StoreLock, "assertHeld">): Promise<ControlRequest | null> {
  if (withdrawRefusal(slug, request) !== undefined) return request;
  await lock.assertHeld();
  const taken = await store.clearControl(slug, request);
  if (!taken.ok) throw taken.error;
  if (!taken.cleared) return null;
  try {
    await lock.assertHeld();
  } catch (error) {
    const refiled = await store.requestControl(slug, request.signal, { reason: request.reason, now: () => request.requestedAt }).catch((thrown: unknown) => ({ ok: false as const, error: thrown }));
    throw refiled.ok ? error : notHandedOn(slug, request, error, refiled.error);
  }
  return request;
}

/**
 * The displaced holder's error when the store refused to file its taken request again (the run's next holder
 * ended, or the store failed): the request is pending nowhere now, so the error that ends this holder says so,
 * naming it and the refusal. The lock's code stays, with its details: callers treat a lost lock as they did.
 */
function notHandedOn(slug: string, request: ControlRequest, lost: unknown, refusal: unknown): WorkflowError {
  const why = isWorkflowError(refusal) ? `${refusal.code}: ${refusal.message}` : refusal instanceof Error ? refusal.message : String(refusal);
  const by = `pid ${request.requestedBy.pid} on ${request.requestedBy.host}`;
  const lockWords = lost instanceof Error ? lost.message : String(lost);
  return workflowError(
    "run",
    isWorkflowError(lost) ? lost.code : "LOCK_LOST",
    `run ${slug}: the ${request.signal} request ("${request.reason}", filed ${request.requestedAt} by ${by}) that this holder had taken could not be handed on to the run's next holder (${why}); it is pending nowhere now. This holder stops: its lock is gone (${lockWords}).`,
    {
      ...(isWorkflowError(lost) ? lost.details : {}),
      request,
      handOff: { ...(isWorkflowError(refusal) ? { code: refusal.code } : {}), message: refusal instanceof Error ? refusal.message : String(refusal) },
      hint: `file the ${request.signal} again (phasekit ${request.signal} ${slug}) once the run is running, if it should still ${request.signal}`,
    },
    lost,
  );
}

/** What a `notHandedOn` error names, for a caller that words it for its own user (the pi extension). */
export interface LostHandOff {
  request: ControlRequest;
  /** The store's refusal of the re-filing. */
  handOff: { code?: string; message: string };
  /** The lock's own error: why the holder no longer has the run. */
  lock: string;
  hint: string;
}

/** The request a displaced holder took and could not hand on, when `error` is `takeRequest`'s `notHandedOn`. */
export function lostHandOff(error: unknown): LostHandOff | undefined {
  if (!isWorkflowError(error)) return undefined;
  const { request, handOff, hint } = error.details as { request?: ControlRequest; handOff?: LostHandOff["handOff"]; hint?: string };
  if (request === undefined || handOff === undefined) return undefined;
  const lost = (error as { cause?: unknown }).cause;
  return { request, handOff, lock: lost instanceof Error ? lost.message : String(lost), hint: hint ?? "" };
}
