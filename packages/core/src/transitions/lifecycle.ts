/** Lifecycle moves that do not walk the path: pause, resume, fail, and marking the end as notified. */
import { isLive, type WorkflowState } from "../state/schema.js";
import { workflowError } from "../errors/workflow-error.js";
import { clockError, refuse, statusError } from "./helpers.js";
import type { TransitionContext, TransitionOutcome } from "./types.js";

/** Pauses a running run; it keeps its place and can be resumed. */
export function pause(state: WorkflowState, ctx: TransitionContext): TransitionOutcome {
  if (state.status !== "running") return refuse(state, statusError("pause", state, "NOT_RUNNING", "running"));
  const clock = clockError("pause", ctx);
  if (clock) return refuse(state, clock);
  return { ok: true, state: { ...state, status: "paused", cancelPending: false, generation: state.generation + 1, updatedAt: ctx.now }, happened: { type: "paused" } };
}

/** Resumes a paused run where it stopped. */
export function resume(state: WorkflowState, ctx: TransitionContext): TransitionOutcome {
  if (state.status !== "paused") return refuse(state, statusError("resume", state, "NOT_PAUSED", "paused"));
  const clock = clockError("resume", ctx);
  if (clock) return refuse(state, clock);
  return { ok: true, state: { ...state, status: "running", cancelPending: false, generation: state.generation + 1, updatedAt: ctx.now }, happened: { type: "resumed" } };
}

/** Ends a running or paused run as failed, keeping the reason for messages and inspection. */
export function fail(state: WorkflowState, reason: string, ctx: TransitionContext): TransitionOutcome {
  if (!isLive(state)) return refuse(state, statusError("fail", state, "NOT_RUNNING", "running or paused"));
  const clock = clockError("fail", ctx);
  if (clock) return refuse(state, clock);
  const next: WorkflowState = {
    ...state,
    status: "failed",
    failureReason: reason,
    cancelPending: false,
    completionNotified: false,
    generation: state.generation + 1,
    updatedAt: ctx.now,
    finishedAt: ctx.now,
  };
  return { ok: true, state: next, happened: { type: "failed", reason } };
}

/** Records that the end-of-run message was sent, so a repeated `agent_end` does not send it twice. */
export function markCompletionNotified(state: WorkflowState, ctx: TransitionContext): TransitionOutcome {
  if (isLive(state)) return refuse(state, statusError("notify", state, "NOT_FINISHED", "completed, cancelled or failed"));
  if (state.completionNotified) {
    return refuse(
      state,
      workflowError("notify", "ALREADY_NOTIFIED", `run "${state.taskId}" of workflow "${state.workflowKey}" was already notified of its end.`, {
        field: "completionNotified",
        value: true,
        workflowKey: state.workflowKey,
        hint: "Send the end-of-run message only when completionNotified is false.",
      }),
    );
  }
  const clock = clockError("notify", ctx);
  if (clock) return refuse(state, clock);
  return {
    ok: true,
    state: { ...state, completionNotified: true, cancelPending: false, generation: state.generation + 1, updatedAt: ctx.now },
    happened: { type: "notified", status: state.status },
  };
}
