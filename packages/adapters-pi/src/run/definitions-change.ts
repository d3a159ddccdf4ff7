/**
 * Step 3b of `runWorkflow`: a resumed run whose definitions changed since it was pinned. The run's history holds
 * the definitions it goes on with (definitions-pin.ts); when `options.workflow.registry` differs, core's diff by
 * phase id and the choices that work (definitions-review.ts) go to `onDefinitionsChanged`, and the run goes on as
 * chosen. Without the option the run keeps its pinned definitions; a run with no pin (recorded before pins
 * existed) is refused with DEFINITIONS_CHANGED rather than moved silently.
 */
import { checkDefinitions, migrateState, refusalToError, workflowError, type WorkflowRegistry, type WorkflowState } from "@phasekit/core";
import type { CheckpointStore } from "../engine/checkpoint-port.js";
import type { WorkflowMetadata } from "../store/metadata-schema.js";
import { loadPin, pinData, pinnedRegistry, savePin, type PinOutputReader } from "./definitions-pin.js";
import { definitionsUnchanged, reviewDefinitions, type DefinitionsChoice, type DefinitionsReview } from "./definitions-review.js";
import type { RunLocation } from "./target.js";

/** What `onDefinitionsChanged` is shown: the run, core's diff by phase id, and the choices that work for it. */
export interface DefinitionsChange {
  slug: string;
  runDir: string;
  workflowKey: string;
  /** Core's diff: one entry per changed workflow, per-phase changes by id (an insertion is one change). */
  diff: DefinitionsReview["diff"];
  /** The diff as text, one line per changed workflow. */
  text: string;
  /** Whether the run's position still resolves in the new definitions; `reason` says why not. */
  resolves: boolean;
  reason: string;
  /** What may be answered: keep (the pinned definitions), move (same phase), restart-scope, cancel. */
  choices: readonly DefinitionsChoice[];
}

/** Decides what a run does when its definitions changed; the answer must be one of `change.choices`. */
export type OnDefinitionsChanged = (change: DefinitionsChange) => DefinitionsChoice | Promise<DefinitionsChoice>;

/** What the run goes on with: the definitions and, when a choice moved it, the state it moved to (not yet written). */
export interface SettledDefinitions {
  registry: WorkflowRegistry;
  /** Undefined when nothing changed. */
  decision?: { choice: DefinitionsChoice; change: DefinitionsChange; state: WorkflowState };
}

/**
 * The definitions a resumed run goes on with. `existing`: the run's metadata (its stored state is read here);
 * `openHistory`: the run's history (opened only when the definitions changed, to read the pin).
 */
export async function settleDefinitions(
  workflow: { registry: WorkflowRegistry },
  existing: WorkflowMetadata | null,
  location: RunLocation,
  openHistory: () => Promise<CheckpointStore>,
  onChanged: OnDefinitionsChanged | undefined,
  now: number,
  readOutput?: PinOutputReader,
): Promise<SettledDefinitions> {
  const loaded = workflow.registry;
  if (existing?.state === undefined) return { registry: loaded };
  const migrated = migrateState(existing.state);
  if (!migrated.ok) throw refusalToError(migrated.error);
  const state = migrated.state;
  if (definitionsUnchanged(loaded, state)) return { registry: loaded };
  const pinned = pinnedRegistry(await loadPin(await openHistory(), state, readOutput), state.taskId);
  const review = reviewDefinitions(loaded, state, pinned, now);
  if (review.same) return { registry: loaded };
  const change: DefinitionsChange = {
    slug: location.slug,
    runDir: location.runDir,
    workflowKey: state.workflowKey,
    diff: review.diff,
    text: review.text,
    resolves: review.resolves,
    reason: review.reason,
    choices: review.choices,
  };
  const choice = onChanged === undefined ? (pinned !== undefined ? "keep" : undefined) : await onChanged(change);
  if (choice === undefined) throw refused(change, undefined);
  if (!review.choices.includes(choice)) throw refused(change, choice);
  switch (choice) {
    case "keep":
      return { registry: review.pinned as WorkflowRegistry, decision: { choice, change, state } };
    case "move":
      return { registry: loaded, decision: { choice, change, state: review.moved as WorkflowState } };
    case "restart-scope":
      return { registry: loaded, decision: { choice, change, state: review.restarted as WorkflowState } };
    case "cancel":
      return { registry: pinned ?? loaded, decision: { choice, change, state: review.cancelled as WorkflowState } };
  }
}

function refused(change: DefinitionsChange, choice: unknown): Error {
  const asked = choice === undefined ? "the run has no pinned definitions to keep and no onDefinitionsChanged option chose" : `onDefinitionsChanged answered ${JSON.stringify(choice) ?? String(choice)}, which is not one of ${change.choices.join(", ")}`;
  return workflowError("run", "DEFINITIONS_CHANGED", `the definitions of run ${change.slug} changed since it started, and ${asked}:\n${change.text}${change.resolves ? "" : `\n${change.reason}`}`, {
    field: "onDefinitionsChanged",
    value: choice,
    workflowKey: change.workflowKey,
    diff: change.diff,
    choices: change.choices,
    hint: `pass onDefinitionsChanged returning one of ${change.choices.join(", ")}, or run with the definitions the run started with`,
  });
}

/**
 * `history` once it holds the pin of the definitions `state` goes on with (written when new or moved, else
 * reused). Only definitions whose fingerprints are the ones the state records are pinned: a finished run re-entered
 * with other definitions (never reviewed: it does not move) must not get them pinned under its old fingerprints.
 */
export async function historyWithPin(history: CheckpointStore, state: WorkflowState, settled: SettledDefinitions): Promise<CheckpointStore> {
  const v = checkDefinitions(settled.registry, state);
  if (v.ok && v.verdict === "unchanged") await savePin(history, state, pinData(state, settled.registry));
  return history;
}
