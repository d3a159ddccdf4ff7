/**
 * What a live run may do when the definitions loaded now differ from the ones it is pinned to: core's diff by
 * phase id, and every choice that works for this run, each with the state (or definitions) it leads to. One home
 * for the rule the pi extension's dialog, `runWorkflow`'s `onDefinitionsChanged` and `phasekit show` follow:
 *  - `keep`: go on with the pinned definitions (only when the run has a pin);
 *  - `move`: the new definitions at the same phase ids (core's carryPosition; only where the current phase still
 *    exists, so an inserted or removed earlier phase does not move the run);
 *  - `restart-scope`: restart the current scope with the new definitions (core's restartScope);
 *  - `cancel`: end the run (core's cancelNow, on the definitions it was on).
 * A run never moves to another phase silently: nothing here changes a run, the caller commits what was chosen.
 */
import { cancelNow, carryPosition, checkDefinitions, isLive, restartScope, type WorkflowChange, type WorkflowRegistry, type WorkflowState } from "@phasekit/core";

/** A choice for a run whose definitions changed. */
export type DefinitionsChoice = "keep" | "move" | "restart-scope" | "cancel";

/** The order choices are offered in (the safest first). */
export const DEFINITIONS_CHOICES: readonly DefinitionsChoice[] = ["keep", "move", "restart-scope", "cancel"];

/** A changed run's review: the diff, and what each choice that works leads to. */
export interface DefinitionsReview {
  /** Core's diff by phase id (an insertion is one change); per-phase changes need the pin. */
  readonly diff: readonly WorkflowChange[];
  /** The diff as text, one line per changed workflow. */
  readonly text: string;
  /** Whether the run's position still resolves in the loaded definitions; `reason` says why not. */
  readonly resolves: boolean;
  readonly reason: string;
  /** The choices that work, safest first. */
  readonly choices: readonly DefinitionsChoice[];
  /** The definitions `keep` goes on with (the pin). */
  readonly pinned: WorkflowRegistry | undefined;
  /** The state each moving choice leads to (not committed). */
  readonly moved: WorkflowState | undefined;
  readonly restarted: WorkflowState | undefined;
  readonly cancelled: WorkflowState | undefined;
}

/** One line per changed workflow, from core's diff. */
export function diffText(diff: readonly WorkflowChange[]): string {
  if (diff.length === 0) return "  (the definitions differ)";
  return diff
    .map((w) => {
      const phases = w.phases.map((p) => `${p.id} ${p.change}`).join(", ");
      return `  ${w.workflowKey}: ${w.change}${phases === "" ? "" : ` (${phases})`}`;
    })
    .join("\n");
}

/**
 * Compares live run `state` with `loaded`; `pinned`: the definitions the run is pinned to (from its history or
 * session), for a diff by phase id and the keep and move choices. `same` when nothing the run goes on with changed
 * (a finished run is never reviewed: it never moves again).
 */
export function reviewDefinitions(loaded: WorkflowRegistry, state: WorkflowState, pinned: WorkflowRegistry | undefined, now: number): { same: true } | ({ same: false } & DefinitionsReview) {
  if (definitionsUnchanged(loaded, state)) return { same: true };
  // Compare with what the run was pinned to (moved runs record their new pin; older runs only fingerprints).
  const baseline = pinned === undefined ? state : { ...state, definitions: Object.fromEntries(pinned.fingerprints) };
  const v = checkDefinitions(loaded, baseline, pinned);
  if (unchanged(v)) return { same: true };
  const diff = v.ok ? v.diff : ((v.error.details as { diff?: readonly WorkflowChange[] }).diff ?? []);
  const ctx = { now };
  const carried = pinned === undefined ? undefined : carryPosition(loaded, state, pinned, ctx);
  const restarted = restartScope(loaded, state, ctx);
  const cancelled = cancelNow(pinned ?? loaded, state, ctx);
  const works = {
    keep: pinned !== undefined,
    move: carried?.ok === true,
    "restart-scope": restarted.ok,
    cancel: cancelled.ok,
  };
  return {
    same: false,
    diff,
    text: diffText(diff),
    resolves: v.ok,
    reason: v.ok ? "" : v.error.message,
    choices: DEFINITIONS_CHOICES.filter((c) => works[c]),
    pinned,
    moved: carried?.ok === true ? carried.state : undefined,
    restarted: restarted.ok ? restarted.state : undefined,
    cancelled: cancelled.ok ? cancelled.state : undefined,
  };
}

/** True when a review has nothing to say: the run is finished, or nothing it records changed (no pin needed to tell). */
export function definitionsUnchanged(loaded: WorkflowRegistry, state: WorkflowState): boolean {
  return !isLive(state) || unchanged(checkDefinitions(loaded, state));
}

function unchanged(v: ReturnType<typeof checkDefinitions>): boolean {
  return v.ok && v.verdict !== "changed";
}
