/**
 * The vocabulary of the reducer: what goes in (events, a clock reading) and what comes out (the next state and
 * a description of what happened, or a typed refusal). Adapters act on `Happening`; core never acts.
 */
import type { WorkflowErrorCode } from "../errors/workflow-error.js";
import type { Outcome } from "../errors/refusal.js";
import type { WorkflowState } from "../state/schema.js";

/** What a transition needs from the outside world: the time (epoch ms), since core reads no clock. */
export interface TransitionContext {
  readonly now: number;
}

/** A concrete phase, named the way presentation and journals need it. `depth` counts path levels (1 = root). */
export interface PhaseRef {
  readonly workflowKey: string;
  readonly phaseId: string;
  readonly phaseName: string;
  readonly emoji: string;
  readonly depth: number;
}

/** Which of the seed's advance cases applied (1 enter a reference, 2 next phase, 3 finish, 4 leave a sub-workflow). */
export type AdvanceCase = 1 | 2 | 3 | 4;

/** What a successful transition did, for messages, status, journals. */
export type Happening =
  | { readonly type: "started"; readonly workflowKey: string; readonly to: PhaseRef; readonly entered: readonly string[] }
  | {
      readonly type: "advanced";
      readonly advanceCase: 2;
      readonly from: PhaseRef;
      readonly to: PhaseRef;
      /** Sub-workflows entered automatically because the next entry was a reference. */
      readonly entered: readonly string[];
    }
  | { readonly type: "entered-subworkflow"; readonly advanceCase: 1; readonly to: PhaseRef; readonly entered: readonly string[] }
  | {
      readonly type: "exited-subworkflow";
      readonly advanceCase: 4;
      readonly from: PhaseRef;
      readonly to: PhaseRef;
      /** Finished scopes, innermost first. */
      readonly exited: readonly string[];
      readonly entered: readonly string[];
    }
  | { readonly type: "completed"; readonly advanceCase: 3 | 4; readonly from: PhaseRef; readonly exited: readonly string[] }
  | {
      readonly type: "looped";
      /** The scope that restarted (the innermost one). */
      readonly workflowKey: string;
      readonly loops: number;
      readonly maxLoops: number | undefined;
      readonly to: PhaseRef;
      readonly entered: readonly string[];
    }
  | {
      readonly type: "routed";
      /** What the gate said: "fail" (verify failed, onFail) or "reject" (approval rejected, onReject). */
      readonly on: GateOutcome;
      /** The scope the route stays in; the route counts as one of its loops. */
      readonly workflowKey: string;
      readonly loops: number;
      readonly maxLoops: number | undefined;
      readonly from: PhaseRef;
      readonly to: PhaseRef;
    }
  | {
      readonly type: "restarted-scope";
      /** The scope that restarted: the innermost one that still stands in the definitions. */
      readonly workflowKey: string;
      /** Levels below it dropped because their definitions no longer fit the path. */
      readonly dropped: number;
      readonly to: PhaseRef;
      readonly entered: readonly string[];
    }
  | {
      readonly type: "carried";
      /** The phase the run is on, the same id as before, in the new definitions. */
      readonly to: PhaseRef;
      /** Path levels whose index changed (an earlier entry inserted, removed or moved). */
      readonly shifted: number;
    }
  | { readonly type: "cancel-armed" }
  | { readonly type: "cancelled"; readonly via: "confirm" | "now" }
  | { readonly type: "paused" }
  | { readonly type: "resumed" }
  | { readonly type: "failed"; readonly reason: string }
  | { readonly type: "notified"; readonly status: WorkflowState["status"] };

/** A gate's "no": a failed verify ("fail", routed by onFail) or a rejected approval ("reject", by onReject). */
export type GateOutcome = "fail" | "reject";

/** The codes a path walk can refuse with (see navigation.ts). */
export type PathCode = "INVALID_STATE" | "MISSING_DEFINITION" | "INVALID_PATH_INDEX" | "NESTING_TOO_DEEP";

/** The codes every move can be refused with: a bad clock or argument, or a registry compile did not make. */
export type CommonCode = "INVALID_OPTIONS" | "INVALID_REGISTRY";

/**
 * The result of every transition: the next state and what happened, or a plain-data refusal whose code is one
 * of `C`. A refusal changes nothing: the caller keeps the state it had (an armed cancel stays armed).
 */
export type TransitionOutcome<C extends WorkflowErrorCode = WorkflowErrorCode> = Outcome<{ readonly state: WorkflowState; readonly happened: Happening }, C>;

/** What a new run needs: which workflow, and the task it works on. The id comes from the adapter. */
export interface StartInput {
  readonly workflowKey: string;
  readonly taskId: string;
  readonly taskDescription: string;
}

/** Everything `reduce` understands: one variant per transition, a union on `type`. `start` begins a journal. */
export type WorkflowEvent =
  | ({ readonly type: "start" } & StartInput)
  | { readonly type: "advance" }
  | { readonly type: "loop" }
  | { readonly type: "restart-scope" }
  | { readonly type: "route"; readonly on: GateOutcome }
  | { readonly type: "cancel" }
  | { readonly type: "cancel-now" }
  | { readonly type: "pause" }
  | { readonly type: "resume" }
  | { readonly type: "fail"; readonly reason: string }
  | { readonly type: "mark-notified" };

/** The refusal codes of each event, so a `switch` on `error.code` is exhaustive. */
export interface RefusalCodes {
  start: CommonCode | "ALREADY_STARTED" | "UNKNOWN_WORKFLOW" | PathCode;
  advance: CommonCode | "NOT_RUNNING" | PathCode;
  loop: CommonCode | "NOT_RUNNING" | "NOT_LOOPABLE" | "MAX_LOOPS_REACHED" | PathCode;
  "restart-scope": CommonCode | "NOT_RUNNING" | PathCode;
  route: CommonCode | "NOT_RUNNING" | "NO_ROUTE" | "MAX_LOOPS_REACHED" | PathCode;
  cancel: CommonCode | "NOT_RUNNING";
  "cancel-now": CommonCode | "NOT_RUNNING";
  pause: CommonCode | "NOT_RUNNING";
  resume: CommonCode | "NOT_PAUSED";
  fail: CommonCode | "NOT_RUNNING";
  "mark-notified": CommonCode | "NOT_FINISHED" | "ALREADY_NOTIFIED";
}

/** The refusal codes `reduce` can return for an event of type `T`. */
export type RefusalCode<T extends WorkflowEvent["type"] = WorkflowEvent["type"]> = RefusalCodes[T];
