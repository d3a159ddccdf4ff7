/** `reduce`: one entry point for every event, for adapters that journal or replay events. */
import type { WorkflowRegistry } from "../definitions/schema.js";
import { advance } from "./advance.js";
import { cancel, cancelNow } from "./cancel.js";
import { fail, markCompletionNotified, pause, resume } from "./lifecycle.js";
import { loop } from "./loop.js";
import { workflowError } from "../errors/workflow-error.js";
import { refuse } from "./helpers.js";
import type { WorkflowState } from "../state/schema.js";
import type { TransitionContext, TransitionOutcome, WorkflowEvent } from "./types.js";

/** Applies `event` to `state`: the next state and what happened, or a typed refusal. Never throws. */
export function reduce(state: WorkflowState, event: WorkflowEvent, registry: WorkflowRegistry, ctx: TransitionContext): TransitionOutcome {
  switch (event.type) {
    case "advance":
      return advance(state, registry, ctx);
    case "loop":
      return loop(state, registry, ctx);
    case "cancel":
      return cancel(state, ctx);
    case "cancel-now":
      return cancelNow(state, ctx);
    case "pause":
      return pause(state, ctx);
    case "resume":
      return resume(state, ctx);
    case "fail":
      return fail(state, event.reason, ctx);
    case "mark-notified":
      return markCompletionNotified(state, ctx);
    default:
      return unknownEvent(state, event);
  }
}

// The `never` parameter makes a new event type a compile error here; at run time (an untyped caller) it refuses.
function unknownEvent(state: WorkflowState, event: never): TransitionOutcome {
  const type: unknown = (event as { type?: unknown } | null)?.type;
  return refuse(
    state,
    workflowError("reduce", "INVALID_OPTIONS", `unknown event type ${JSON.stringify(type) ?? String(type)}.`, {
      field: "event.type",
      value: type,
      hint: "Use one of: advance, loop, cancel, cancel-now, pause, resume, fail, mark-notified.",
    }),
  );
}
