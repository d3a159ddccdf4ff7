/**
 * The bookkeeping of every move, in one place: the registry and clock checks, the status guard, and then,
 * for an accepted move, the next state with `generation` + 1, `updatedAt`, the step and loop counters, and a
 * pending cancel disarmed (unless the move armed it). Transitions only describe the move (`Move`).
 *
 * A clock that goes backwards is clamped: `updatedAt` never decreases, so it is never below `startedAt`.
 */
import type { WorkflowRegistry } from "../definitions/registry.js";
import { argumentError, stateError } from "./arguments.js";
import { refusal, type Refusal } from "../errors/refusal.js";
import type { WorkflowErrorCode } from "../errors/workflow-error.js";
import type { PathSegment, WorkflowState, WorkflowStatus } from "../state/schema.js";
import type { CommonCode, Happening, TransitionContext, TransitionOutcome } from "./types.js";

// Kept for the modules that import it from here; the checks live in arguments.ts.
export { argumentError } from "./arguments.js";

/** What a move changes; everything else (generation, clock, counters' bookkeeping) is `applyMove`'s job. */
export interface Change {
  readonly status?: WorkflowStatus;
  readonly currentPath?: readonly PathSegment[];
  /** Steps to add to `globalStepCount`. */
  readonly steps: number;
  /** Loops to add to `loopCount`. */
  readonly loops?: number;
  readonly failureReason?: string;
  readonly completionNotified?: boolean;
  /** Only `cancel` arms; any other accepted move disarms. */
  readonly armCancel?: boolean;
  /** The fingerprints of the definitions the run goes on with (only a move onto new definitions sets them). */
  readonly definitions?: Readonly<Record<string, string>>;
}

/** A move as a transition describes it: the change and what happened, or a refusal. */
export type Move<C extends WorkflowErrorCode> = { readonly ok: true; readonly change: Change; readonly happened: Happening } | { readonly ok: false; readonly error: Refusal<C> };

/** The lifecycle statuses a move accepts, and the refusal for the others. */
export interface Guard<C extends WorkflowErrorCode> {
  readonly accepts: (status: WorkflowStatus) => boolean;
  readonly code: C;
  readonly wanted: string;
}

/** The refusal for a move that needs another lifecycle status. */
export function statusRefusal<C extends WorkflowErrorCode>(scope: string, state: WorkflowState, code: C, wanted: string): Refusal<C> {
  return refusal(scope, code, `run "${state.taskId}" of workflow "${state.workflowKey}" is ${state.status}; ${scope} needs it ${wanted}.`, {
    field: "status",
    value: state.status,
    workflowKey: state.workflowKey,
    hint: statusHint(scope, state.status),
  });
}

/** What to do about a run in `status` that `scope` refused: chosen by the status the run is in, not the code. */
export function statusHint(scope: string, status: WorkflowStatus): string {
  switch (status) {
    case "paused":
      return `The run is paused: resume it first, then ${scope}.`;
    case "running":
      return scope === "resume" ? "The run is already running: nothing to resume." : "The run is still running: finish or cancel it first.";
    default:
      return `The run is ${status}: start a new run; a finished run cannot move.`;
  }
}

/** Runs `describe` under the shared checks and turns its change into the next state. */
export function applyMove<C extends WorkflowErrorCode>(
  scope: string,
  registry: WorkflowRegistry,
  state: WorkflowState,
  ctx: TransitionContext,
  guard: Guard<C>,
  describe: () => Move<C>,
): TransitionOutcome<C | CommonCode> {
  const bad = argumentError(scope, registry, ctx) ?? stateError(scope, state);
  if (bad !== undefined) return { ok: false, error: bad };
  if (!guard.accepts(state.status)) return { ok: false, error: statusRefusal(scope, state, guard.code, guard.wanted) };
  const move = describe();
  if (!move.ok) return move;
  return { ok: true, state: nextState(state, move.change, ctx.now), happened: move.happened };
}

/** The next state, always built with the same fields in the same order (one object shape across a walk). */
function nextState(s: WorkflowState, c: Change, now: number): WorkflowState {
  const status = c.status ?? s.status;
  const at = now < s.updatedAt ? s.updatedAt : now;
  const ends = status !== s.status && (status === "completed" || status === "cancelled" || status === "failed");
  return makeState(s, {
    status,
    failureReason: c.failureReason ?? s.failureReason,
    currentPath: c.currentPath ?? s.currentPath,
    globalStepCount: s.globalStepCount + c.steps,
    loopCount: s.loopCount + (c.loops ?? 0),
    updatedAt: at,
    finishedAt: ends ? at : s.finishedAt,
    generation: s.generation + 1,
    completionNotified: c.completionNotified ?? (ends ? false : s.completionNotified),
    cancelPending: c.armCancel === true,
    definitions: c.definitions ?? s.definitions,
  });
}

type Varying = Pick<
  WorkflowState,
  "status" | "failureReason" | "currentPath" | "globalStepCount" | "loopCount" | "updatedAt" | "finishedAt" | "generation" | "completionNotified" | "cancelPending" | "definitions"
>;

/** Every state core makes goes through this literal, so all share one hidden class. */
export function makeState(s: Omit<WorkflowState, keyof Varying>, v: Varying): WorkflowState {
  return {
    schemaVersion: s.schemaVersion,
    workflowKey: s.workflowKey,
    status: v.status,
    failureReason: v.failureReason,
    currentPath: v.currentPath,
    globalStepCount: v.globalStepCount,
    loopCount: v.loopCount,
    taskId: s.taskId,
    taskDescription: s.taskDescription,
    startedAt: s.startedAt,
    updatedAt: v.updatedAt,
    finishedAt: v.finishedAt,
    generation: v.generation,
    completionNotified: v.completionNotified,
    cancelPending: v.cancelPending,
    definitions: v.definitions,
  };
}
