/** Shared building blocks of the transitions: refusals, status guards, and the clock check. */
import { workflowError, type WorkflowError, type WorkflowErrorCode } from "../errors/workflow-error.js";
import type { WorkflowState } from "../state/schema.js";
import type { TransitionContext, TransitionOutcome } from "./types.js";

/** A refusal that keeps the input, disarming a pending cancel unless the refused move was a cancel itself. */
export function refuse(state: WorkflowState, error: WorkflowError, keepCancelArmed = false): TransitionOutcome {
  const kept = state.cancelPending && !keepCancelArmed ? { ...state, cancelPending: false } : state;
  return { ok: false, error, state: kept };
}

/** The refusal for a move that needs another lifecycle status (NOT_RUNNING, NOT_PAUSED, NOT_FINISHED). */
export function statusError(scope: string, state: WorkflowState, code: WorkflowErrorCode, wanted: string): WorkflowError {
  return workflowError(scope, code, `run "${state.taskId}" of workflow "${state.workflowKey}" is ${state.status}; ${scope} needs it ${wanted}.`, {
    field: "status",
    value: state.status,
    workflowKey: state.workflowKey,
    hint: hintFor(code),
  });
}

function hintFor(code: WorkflowErrorCode): string {
  if (code === "NOT_PAUSED") return "Only a paused run can be resumed.";
  if (code === "NOT_FINISHED") return "Mark the completion as notified only after the run has finished.";
  return "Start a new run with the workflow's command; a finished run cannot move.";
}

/** Refuses a clock reading that could not be persisted (not a non-negative integer of epoch ms). */
export function clockError(scope: string, ctx: TransitionContext): WorkflowError | undefined {
  const now = ctx.now;
  if (Number.isInteger(now) && now >= 0) return undefined;
  return workflowError(scope, "INVALID_OPTIONS", `ctx.now must be epoch milliseconds (a non-negative integer), got ${String(now)}.`, {
    field: "ctx.now",
    value: now,
    hint: "Pass the current time (epoch ms) from the adapter.",
  });
}

