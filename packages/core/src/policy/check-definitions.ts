/**
 * `checkDefinitions`: may a live run continue on the definitions loaded now? A run records, at start, the
 * fingerprint of every workflow it can reach. The verdict compares them with the registry's:
 *  - `unchanged`: every recorded workflow is the same;
 *  - `changed`: some changed, but the current position still resolves (`diff` says what changed, by phase id when
 *    the caller passes the definitions the run started with as `pinned`; then `position` also says whether the
 *    run's path still names the same phases, or was shifted by an insertion or removal before it);
 *  - `unknown`: the run recorded no fingerprints (started before they existed) and its position resolves;
 *  - a DEFINITIONS_CHANGED refusal when a live run's position no longer resolves, with the diff and the choices
 *    that work for it: `restart-scope` (core's `restartScope`, when a scope of the run still stands) and `cancel`.
 * A finished run never moves again, so it is never refused: its verdict only says whether its workflows changed.
 */
import type { WorkflowRegistry } from "../definitions/registry.js";
import { refusal, type Outcome } from "../errors/refusal.js";
import { isLive, type WorkflowState } from "../state/schema.js";
import { registryError, stateError } from "../transitions/arguments.js";
import { walkPath } from "../transitions/navigation.js";
import type { CommonCode } from "../transitions/types.js";
import { standingLevels } from "../transitions/restart-scope.js";
import { diffDefinitions, samePosition, type WorkflowChange } from "./definitions-diff.js";

export type { PhaseChange, WorkflowChange } from "./definitions-diff.js";

/** What a caller may do with a run whose position no longer resolves. */
export type DefinitionsChoice = "cancel" | "restart-scope";

/** The verdict of checkDefinitions. */
export type DefinitionsVerdict = Outcome<
  | { readonly verdict: "unchanged"; readonly diff: readonly [] }
  | { readonly verdict: "changed"; readonly diff: readonly WorkflowChange[]; readonly position?: "same" | "shifted" }
  | { readonly verdict: "unknown"; readonly diff: readonly [] },
  CommonCode | "DEFINITIONS_CHANGED"
>;

/**
 * Compares the run's recorded fingerprints with `registry`, and checks that a live run's position still resolves.
 * `pinned`: the definitions the run started with (optional), for a diff by phase id and the `position` check.
 */
export function checkDefinitions(registry: WorkflowRegistry, state: WorkflowState, pinned?: WorkflowRegistry): DefinitionsVerdict {
  const bad = registryError("definitions", registry) ?? stateError("definitions", state) ?? (pinned === undefined ? undefined : registryError("definitions", pinned));
  if (bad !== undefined) return { ok: false, error: bad };
  const diff = diffDefinitions(registry, state.definitions, pinned);
  const walked = isLive(state) ? walkPath("definitions", registry, state) : undefined;
  if (walked !== undefined && !walked.ok) {
    const choices: readonly DefinitionsChoice[] = standingLevels(registry, state.currentPath) > 0 ? ["cancel", "restart-scope"] : ["cancel"];
    const error = refusal("definitions", "DEFINITIONS_CHANGED", `the definitions changed under run "${state.taskId}" and its position no longer resolves: ${walked.error.message}`, {
      field: walked.error.details.field,
      workflowKey: state.workflowKey,
      diff,
      choices,
      cause: walked.error.code,
      hint: choices.length > 1 ? "Restart the current scope (restartScope), or cancel the run." : "Restore the workflow's definition, or cancel the run.",
    });
    return { ok: false, error };
  }
  if (state.definitions === undefined) return { ok: true, verdict: "unknown", diff: [] };
  if (diff.length === 0) return { ok: true, verdict: "unchanged", diff: [] };
  if (pinned === undefined || !isLive(state)) return { ok: true, verdict: "changed", diff };
  return { ok: true, verdict: "changed", diff, position: samePosition(registry, state, pinned) ? "same" : "shifted" };
}
