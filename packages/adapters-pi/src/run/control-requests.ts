/**
 * `requestPause` / `requestStop` by target (slug or path), for another process or a CLI. The rules live in the
 * store's `requestControl` so every caller and every store applies them: the run must exist; a finished run
 * (completed, cancelled) takes neither request (RUN_FINISHED); a pause needs a run that is running now (status
 * running and a live holder), since a pause left for a crashed run would pause its next resume. A stop is
 * accepted for a running, paused or failed run: its next resume ends cancelled.
 */
import type { ControlRequest, ControlSignal } from "../store/control-signals.js";
import { createFsPlanStore, type PlanStore } from "../store/plan-store.js";
import { resolveRunTarget, type PlanRootsOptions } from "./target.js";

/**
 * Which run to signal, and why: a target (slug or path) in the plan roots on disk, or, with `store`, the slug of
 * a run in that store (e.g. a PostgreSQL store, where the run may be held by a process on another machine).
 */
export type ControlTargetOptions = (PlanRootsOptions | { store: PlanStore }) & { target: string; reason?: string };

/** Asks the run at `target` to pause at its next step boundary (it ends `paused`, resumable). */
export function requestPause(options: ControlTargetOptions): Promise<ControlRequest> {
  return fileRequest(options, "pause");
}

/** Asks the run at `target` to stop (its in-flight step's signal aborts; it ends `cancelled` with the reason). */
export function requestStop(options: ControlTargetOptions): Promise<ControlRequest> {
  return fileRequest(options, "stop");
}

async function fileRequest(options: ControlTargetOptions, signal: ControlSignal): Promise<ControlRequest> {
  const reason = options.reason ?? `${signal} requested`;
  if ("store" in options) return unwrap(await options.store.requestControl(options.target, signal, { reason }));
  const r = await resolveRunTarget(options);
  if (r.kind === "ambiguous" || r.kind === "invalid") throw r.error;
  const store = createFsPlanStore({
    repoRoot: options.repoRoot,
    planRoot: r.location.planRoot,
    ...(options.homeDir === undefined ? {} : { homeDir: options.homeDir }),
    ...(options.fs === undefined ? {} : { fs: options.fs }),
  });
  try {
    return unwrap(await store.requestControl(r.location.slug, signal, { reason }));
  } finally {
    await store.close();
  }
}

function unwrap(r: { ok: true; request: ControlRequest } | { ok: false; error: unknown }): ControlRequest {
  if (!r.ok) throw r.error;
  return r.request;
}
