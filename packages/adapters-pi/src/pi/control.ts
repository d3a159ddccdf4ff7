/**
 * Pause and stop requests filed from outside pi (`phasekit pause <run>` / `phasekit stop <run>`, the inspector)
 * for the run this session holds: read through the store's control methods, the same records runWorkflow
 * honours, at the extension's step boundaries (a workflow_step call, the agent going idle, a new prompt). A stop
 * ends the run cancelled; a pause keeps its place (`/workflow-resume <id>` goes on).
 */
import { isLive, move } from "./core-bridge.js";
import type { Continuation } from "./continuation.js";
import type { PiContext } from "./host.js";
import type { Runtime } from "./runtime.js";
import type { ControlRequest, ControlSignal } from "../store/control-signals.js";

/**
 * What a pending request did: nothing, or the run was paused or stopped; `lost`: this session took it, lost the
 * run, and could not hand it on, so it did nothing and is pending nowhere (the user was told).
 */
export type Honoured = "paused" | "stopped" | "lost" | undefined;

// Only a pause is taken before it is acted on (control-requests.ts `takeRequest`), so only a pause can be lost.
const LOST_PAUSE =
  "The user asked from outside this session to pause the workflow, but this session no longer holds the run and the pause could not be handed on to the run's next holder: this pause request did not take effect";

/**
 * The model's words for a `lost` pause, wherever it is found: a workflow_step call (which then did nothing) or a
 * prompt (which then gets these words instead of the running phase's context). Never "paused", never "running".
 */
export function lostPauseText(where: "step" | "prompt"): string {
  return where === "step"
    ? `${LOST_PAUSE}, and this workflow_step call did nothing. The user has been told. Stop and wait for the user; do not call workflow_step until they say how to go on.`
    : `${LOST_PAUSE}. The user has been told. Reply to the user, but do not call workflow_step until they say how to go on.`;
}

/**
 * Honours the held run's pending request, if any. A `lost` pause holds the reminders until the user speaks: the
 * model is told to wait for them (`lostPauseText`), wherever it was found.
 */
export async function honourControl(rt: Runtime, cont: Pick<Continuation, "hold">, ctx: PiContext | undefined): Promise<Honoured> {
  // Every step boundary passes here first: the run's claim from session_start has to be settled (held, or driven
  // elsewhere) before anything reads or moves it.
  await rt.claiming;
  const s = rt.state;
  if (s === null || !isLive(s) || rt.durable.heldSlug() !== s.taskId) return undefined;
  const pending = await pendingRequest(rt, ctx);
  if (pending === null) return undefined;
  // A pause withdrawn meanwhile is gone, and one taken here can no longer be withdrawn (control-requests.ts).
  const taken = pending.signal === "pause" && s.status === "paused" ? { ok: true as const, request: pending } : await rt.durable.takeControl(pending);
  if (!taken.ok) {
    rt.tell(ctx, taken.message, "error");
    cont.hold();
    return "lost";
  }
  if (taken.warning !== undefined) rt.tell(ctx, taken.warning, "warning");
  const request = taken.request;
  if (request === null) return undefined;
  if (request.signal === "pause" && s.status === "paused") {
    await clearHonoured(rt, ctx, request);
    return undefined;
  }
  const r = move(request.signal === "stop" ? "cancel-now" : "pause", s, rt.registry, rt.now());
  if (!r.ok) {
    rt.tell(ctx, `[phasekit] a ${request.signal} request for run ${s.taskId} could not be honoured: ${r.error.message}`, "warning");
    return undefined;
  }
  const warning = await rt.commit(r.state, ctx);
  await clearHonoured(rt, ctx, request);
  if (warning) rt.tell(ctx, warning, "warning");
  if (request.signal === "stop") {
    rt.tell(ctx, `[phasekit] run ${s.taskId} stopped from outside this session (${request.reason}).`, "warning");
    await rt.deliverEnd();
    return "stopped";
  }
  rt.tell(ctx, `[phasekit] run ${s.taskId} paused from outside this session (${request.reason}); /workflow-resume ${s.taskId} goes on.`, "warning");
  return "paused";
}

/** The held run's pending request (only `signal`'s with one); a read the store fails is told once (durable-control.ts). */
export async function pendingRequest(rt: Runtime, ctx: PiContext | undefined, signal?: ControlSignal): Promise<ControlRequest | null> {
  const read = await rt.durable.pendingControl(signal);
  if (read.warning !== undefined) rt.tell(ctx, read.warning, "warning");
  return read.request;
}

/** Clears a request this session acted on; a clear or journal line the store failed is told as a warning. */
export async function clearHonoured(rt: Runtime, ctx: PiContext | undefined, request: ControlRequest): Promise<void> {
  for (const warning of await rt.durable.clearControl(request)) rt.tell(ctx, warning, "warning");
}
