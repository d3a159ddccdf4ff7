/**
 * Cancelling: `cancel` is two-step (the first call arms, a second confirms) so a model cannot end a run by one
 * stray call; `cancelNow` is for a user's explicit command. Both work on running and paused runs.
 */
import { isLive, type WorkflowState } from "../state/schema.js";
import { clockError, refuse, statusError } from "./helpers.js";
import type { TransitionContext, TransitionOutcome } from "./types.js";

/** Arms a pending cancel, or confirms one that is armed (status `cancelled`). */
export function cancel(state: WorkflowState, ctx: TransitionContext): TransitionOutcome {
  if (!isLive(state)) return refuse(state, statusError("cancel", state, "NOT_RUNNING", "running or paused"), true);
  const clock = clockError("cancel", ctx);
  if (clock) return refuse(state, clock, true);
  if (!state.cancelPending) {
    return { ok: true, state: { ...state, cancelPending: true, generation: state.generation + 1, updatedAt: ctx.now }, happened: { type: "cancel-armed" } };
  }
  return cancelled(state, ctx, "confirm");
}

/** Cancels at once, without the confirmation step. */
export function cancelNow(state: WorkflowState, ctx: TransitionContext): TransitionOutcome {
  if (!isLive(state)) return refuse(state, statusError("cancel", state, "NOT_RUNNING", "running or paused"));
  const clock = clockError("cancel", ctx);
  if (clock) return refuse(state, clock);
  return cancelled(state, ctx, "now");
}

function cancelled(state: WorkflowState, ctx: TransitionContext, via: "confirm" | "now"): TransitionOutcome {
  const next: WorkflowState = {
    ...state,
    status: "cancelled",
    cancelPending: false,
    completionNotified: false,
    generation: state.generation + 1,
    updatedAt: ctx.now,
    finishedAt: ctx.now,
  };
  return { ok: true, state: next, happened: { type: "cancelled", via } };
}
