/** Lifecycle moves that do not walk the path: pause, resume, fail, and marking the end as notified. */
import type { WorkflowRegistry } from "../definitions/registry.js";
import { refusal } from "../errors/refusal.js";
import { isFinished, type WorkflowState } from "../state/schema.js";
import { applyMove, type Guard, type Move } from "./apply.js";
import { argumentError, optionError } from "./arguments.js";
import { RUNNING } from "./advance.js";
import { LIVE } from "./cancel.js";
import type { RefusalCode, TransitionContext, TransitionOutcome } from "./types.js";

/** Accepts paused runs only. */
export const PAUSED: Guard<"NOT_PAUSED"> = { accepts: (s) => s === "paused", code: "NOT_PAUSED", wanted: "paused" };
/** Accepts finished runs only. */
export const FINISHED: Guard<"NOT_FINISHED"> = { accepts: (s) => isFinished({ status: s }), code: "NOT_FINISHED", wanted: "completed, cancelled or failed" };

/** Pauses a running run; it keeps its place and can be resumed. */
export function pause(registry: WorkflowRegistry, state: WorkflowState, ctx: TransitionContext): TransitionOutcome<RefusalCode<"pause">> {
  return applyMove("pause", registry, state, ctx, RUNNING, () => ({ ok: true, change: { status: "paused", steps: 0 }, happened: { type: "paused" } }));
}

/** Resumes a paused run where it stopped. */
export function resume(registry: WorkflowRegistry, state: WorkflowState, ctx: TransitionContext): TransitionOutcome<RefusalCode<"resume">> {
  return applyMove("resume", registry, state, ctx, PAUSED, () => ({ ok: true, change: { status: "running", steps: 0 }, happened: { type: "resumed" } }));
}

/** Ends a running or paused run as failed, keeping the reason for messages and inspection. */
export function fail(registry: WorkflowRegistry, state: WorkflowState, reason: string, ctx: TransitionContext): TransitionOutcome<RefusalCode<"fail">> {
  // A reason that is not text would be stored and make the state unreadable (failureReason is a string).
  if (typeof reason !== "string") {
    const bad = argumentError("fail", registry, ctx) ?? optionError("fail", "reason", "must be a string", reason, "Pass the failure as text, e.g. error.message.");
    return { ok: false, error: bad };
  }
  return applyMove("fail", registry, state, ctx, LIVE, () => ({ ok: true, change: { status: "failed", steps: 0, failureReason: reason }, happened: { type: "failed", reason } }));
}

/** Records that the end-of-run message was sent, so a repeated `agent_end` does not send it twice. */
export function markCompletionNotified(registry: WorkflowRegistry, state: WorkflowState, ctx: TransitionContext): TransitionOutcome<RefusalCode<"mark-notified">> {
  return applyMove("notify", registry, state, ctx, FINISHED, () => notifyMove(state));
}

/** The move of `markCompletionNotified`. */
export function notifyMove(state: WorkflowState): Move<"ALREADY_NOTIFIED"> {
  if (state.completionNotified) {
    return {
      ok: false,
      error: refusal("notify", "ALREADY_NOTIFIED", `run "${state.taskId}" of workflow "${state.workflowKey}" was already notified of its end.`, {
        field: "completionNotified",
        value: true,
        workflowKey: state.workflowKey,
        hint: "Send the end-of-run message only when completionNotified is false.",
      }),
    };
  }
  return { ok: true, change: { steps: 0, completionNotified: true }, happened: { type: "notified", status: state.status } };
}
