/**
 * Cancelling: `cancel` is two-step (the first call arms, a second confirms) so a model cannot end a run by one
 * stray call; `cancelNow` is for a user's explicit command. Both work on running and paused runs.
 */
import type { WorkflowRegistry } from "../definitions/registry.js";
import { isLive, type WorkflowState } from "../state/schema.js";
import { applyMove, type Guard, type Move } from "./apply.js";
import type { RefusalCode, TransitionContext, TransitionOutcome } from "./types.js";

/** Accepts running and paused runs. */
export const LIVE: Guard<"NOT_RUNNING"> = { accepts: (s) => isLive({ status: s }), code: "NOT_RUNNING", wanted: "running or paused" };

/** Arms a pending cancel, or confirms one that is armed (status `cancelled`). */
export function cancel(registry: WorkflowRegistry, state: WorkflowState, ctx: TransitionContext): TransitionOutcome<RefusalCode<"cancel">> {
  return applyMove("cancel", registry, state, ctx, LIVE, () => cancelMove(state));
}

/** Cancels at once, without the confirmation step. */
export function cancelNow(registry: WorkflowRegistry, state: WorkflowState, ctx: TransitionContext): TransitionOutcome<RefusalCode<"cancel-now">> {
  return applyMove("cancel", registry, state, ctx, LIVE, () => cancelled("now"));
}

/** The move of `cancel`. */
export function cancelMove(state: WorkflowState): Move<never> {
  if (!state.cancelPending) return { ok: true, change: { steps: 0, armCancel: true }, happened: { type: "cancel-armed" } };
  return cancelled("confirm");
}

/** The move that ends a run as cancelled. */
export function cancelled(via: "confirm" | "now"): Move<never> {
  return { ok: true, change: { status: "cancelled", steps: 0 }, happened: { type: "cancelled", via } };
}
