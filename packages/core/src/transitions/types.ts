/**
 * The vocabulary of the reducer: what goes in (events, a clock reading) and what comes out (the next state and
 * a description of what happened, or a typed refusal). Adapters act on `Happening`; core never acts.
 */
import type { WorkflowError } from "../errors/workflow-error.js";
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
  | { readonly type: "cancel-armed" }
  | { readonly type: "cancelled"; readonly via: "confirm" | "now" }
  | { readonly type: "paused" }
  | { readonly type: "resumed" }
  | { readonly type: "failed"; readonly reason: string }
  | { readonly type: "notified"; readonly status: WorkflowState["status"] };

/**
 * The result of every transition. A refusal carries the state to keep: the input itself, or the input with a
 * pending cancel disarmed when the refused move was not a cancel ("any other action disarms it").
 */
export type TransitionOutcome =
  | { readonly ok: true; readonly state: WorkflowState; readonly happened: Happening }
  | { readonly ok: false; readonly error: WorkflowError; readonly state: WorkflowState };

/** Everything `reduce` understands: one variant per transition, a union on `type`. */
export type WorkflowEvent =
  | { readonly type: "advance" }
  | { readonly type: "loop" }
  | { readonly type: "cancel" }
  | { readonly type: "cancel-now" }
  | { readonly type: "pause" }
  | { readonly type: "resume" }
  | { readonly type: "fail"; readonly reason: string }
  | { readonly type: "mark-notified" };
