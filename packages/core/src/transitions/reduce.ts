/** `reduce`: one entry point for every event (start included), for adapters that journal or replay events. */
import type { WorkflowRegistry } from "../definitions/registry.js";
import { refusal } from "../errors/refusal.js";
import type { WorkflowState } from "../state/schema.js";
import { advance } from "./advance.js";
import { argumentError, stateError } from "./arguments.js";
import { cancel, cancelNow } from "./cancel.js";
import { fail, markCompletionNotified, pause, resume } from "./lifecycle.js";
import { loop } from "./loop.js";
import { restartScope } from "./restart-scope.js";
import { route } from "./route.js";
import { start } from "./start.js";
import type { RefusalCode, TransitionContext, TransitionOutcome, WorkflowEvent } from "./types.js";

/**
 * Applies `event` to `state` (null before a run starts: only `start` is accepted then, and only then): the next
 * state and what happened, or a plain-data refusal whose code belongs to that event. The exported form never
 * throws (boundary.ts).
 */
export function reduce<E extends WorkflowEvent>(
  registry: WorkflowRegistry,
  state: WorkflowState | null,
  event: E,
  ctx: TransitionContext,
): TransitionOutcome<RefusalCode<E["type"]>> {
  // An exotic argument (a Proxy or a getter that throws) is caught at the package boundary (boundary.ts).
  return reduceAny(registry, state, event, ctx) as TransitionOutcome<RefusalCode<E["type"]>>;
}

function reduceAny(registry: WorkflowRegistry, state: WorkflowState | null, event: WorkflowEvent, ctx: TransitionContext): TransitionOutcome {
  const bad = argumentError("reduce", registry, ctx);
  if (bad !== undefined) return { ok: false, error: bad };
  if (typeof event !== "object" || event === null) return unknownEvent(event as never);
  if (event.type === "start") {
    if (state === null) return start(registry, event, ctx);
    const notState = stateError("start", state);
    if (notState !== undefined) return { ok: false, error: notState };
    return { ok: false, error: refusal("start", "ALREADY_STARTED", `run "${state.taskId}" has already started.`, { field: "state", hint: "Pass null as the state of a start event." }) };
  }
  if (state === null) return noRun(event);
  switch (event.type) {
    case "advance":
      return advance(registry, state, ctx);
    case "loop":
      return loop(registry, state, ctx);
    case "restart-scope":
      return restartScope(registry, state, ctx);
    case "route":
      return route(registry, state, event.on, ctx);
    case "cancel":
      return cancel(registry, state, ctx);
    case "cancel-now":
      return cancelNow(registry, state, ctx);
    case "pause":
      return pause(registry, state, ctx);
    case "resume":
      return resume(registry, state, ctx);
    case "fail":
      return fail(registry, state, event.reason, ctx);
    case "mark-notified":
      return markCompletionNotified(registry, state, ctx);
    default:
      return unknownEvent(event);
  }
}

const NO_RUN_CODE = { advance: "NOT_RUNNING", loop: "NOT_RUNNING", "restart-scope": "NOT_RUNNING", route: "NOT_RUNNING", cancel: "NOT_RUNNING", "cancel-now": "NOT_RUNNING", pause: "NOT_RUNNING", fail: "NOT_RUNNING", resume: "NOT_PAUSED", "mark-notified": "NOT_FINISHED" } as const;

/** A non-start event without a run: the event's own status refusal (no run is neither running, paused nor finished). */
function noRun(event: Exclude<WorkflowEvent, { type: "start" }>): TransitionOutcome {
  const code = typeof event.type === "string" && Object.hasOwn(NO_RUN_CODE, event.type) ? NO_RUN_CODE[event.type] : undefined;
  if (code === undefined) return unknownEvent(event as never);
  return { ok: false, error: refusal("reduce", code, `there is no run to ${event.type}.`, { field: "state", hint: "Start a run first: reduce(registry, null, { type: \"start\", … }, ctx)." }) };
}

// The `never` parameter makes a new event type a compile error here; at run time (an untyped caller) it refuses.
function unknownEvent(event: never): TransitionOutcome {
  const type: unknown = (event as { type?: unknown } | null)?.type;
  return {
    ok: false,
    error: refusal("reduce", "INVALID_OPTIONS", `unknown event type ${JSON.stringify(type) ?? String(type)}.`, {
      field: "event.type",
      value: typeof type === "string" ? type : undefined,
      hint: "Use one of: start, advance, loop, restart-scope, route, cancel, cancel-now, pause, resume, fail, mark-notified.",
    }),
  };
}
