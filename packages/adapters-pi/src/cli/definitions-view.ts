/**
 * `phasekit show`'s definitions section: how the definitions a live run is pinned to (its history's pin,
 * run/definitions-pin.ts) differ from the ones in the definition folders now, by phase id, and what the run may
 * do about it when it is next resumed: the same review the pi extension's dialog and runWorkflow's
 * onDefinitionsChanged get (run/definitions-review.ts).
 */
import { migrateState, type WorkflowChange, type WorkflowRegistry, type WorkflowState } from "@phasekit/core";
import { loadDefinitionFolders } from "../definitions/folders.js";
import { isPinOf, PIN_KEY, pinnedRegistry } from "../run/definitions-pin.js";
import type { PlanStore } from "../store/plan-store.js";
import { storeHistoryRecords, storeStepOutput } from "./store-runs.js";
import { reviewDefinitions, type DefinitionsChoice } from "../run/definitions-review.js";

/** The definitions section of `show` (null for a run without a core state). */
export interface DefinitionsView {
  /**
   * `unchanged`: the run goes on with what the folders hold; `changed`: they differ (`diff`); `finished`: the run
   * never moves again; `unknown`: the run records no fingerprints (older than them), or the folders do not hold
   * its workflow (e.g. definitions in code), so there is nothing to compare with (`note` says which).
   */
  verdict: "unchanged" | "changed" | "finished" | "unknown";
  /** Whether the run's history holds the definitions it goes on with. */
  pinned: boolean;
  /** Core's diff by phase id (an insertion is one change); per-phase changes need the pin. */
  diff: WorkflowChange[];
  /** The diff as text, one line per changed workflow (null when unchanged). */
  text: string | null;
  /** Whether the run's path, as recorded, still resolves in the folders' definitions (null when unchanged). */
  resolves: boolean | null;
  /** What the run may be told to do when next resumed (keep, move, restart-scope, cancel). */
  choices: DefinitionsChoice[];
  note: string | null;
}

/** What `show` needs to review a run's definitions: its stored state, the folders, and a reader of its pin. */
export interface DefinitionsInput {
  rawState: unknown;
  defDirs: readonly string[];
  readPin(state: WorkflowState): Promise<unknown>;
  now: number;
}

/** The run's definitions section, and the definitions its position is read in (the pin when they changed). */
export async function definitionsView(input: DefinitionsInput): Promise<{ view: DefinitionsView | null; registry: WorkflowRegistry | undefined }> {
  if (input.rawState === undefined) return { view: null, registry: undefined };
  const migrated = migrateState(input.rawState);
  if (!migrated.ok) return { view: null, registry: undefined };
  const state = migrated.state;
  const pinned = pinnedRegistry(await input.readPin(state), state.taskId);
  const base = { pinned: pinned !== undefined, diff: [], text: null, resolves: null, choices: [] };
  if (state.status !== "running" && state.status !== "paused") return { view: { ...base, verdict: "finished", note: null }, registry: pinned };
  if (state.definitions === undefined) return { view: { ...base, verdict: "unknown", note: "the run records no definition fingerprints (it predates them)" }, registry: undefined };
  if (input.defDirs.length === 0) return { view: { ...base, verdict: "unknown", note: "no definition folders (pass --defs DIR)" }, registry: pinned };
  const loaded = loadDefinitionFolders(input.defDirs).registry;
  if (!loaded.workflows.has(state.workflowKey)) {
    const note = `the definition folders (${input.defDirs.join(", ")}) hold no workflow ${state.workflowKey}`;
    return { view: { ...base, verdict: "unknown", note }, registry: pinned };
  }
  const r = reviewDefinitions(loaded, state, pinned, input.now);
  if (r.same) return { view: { ...base, verdict: "unchanged", note: null }, registry: loaded };
  const note = r.resolves ? null : "its position does not resolve in the folders' definitions as it stands (a move carries it over by phase id)";
  const view: DefinitionsView = { ...base, verdict: "changed", diff: [...r.diff], text: r.text, resolves: r.resolves, choices: [...r.choices], note };
  return { view, registry: pinned ?? loaded };
}

/** The section as `show` prints it: a first line, then the diff and the choices indented. */
export function definitionsLines(v: DefinitionsView): string[] {
  const pin = v.pinned ? "pinned in the run's history" : "no pinned copy";
  switch (v.verdict) {
    case "unchanged":
      return [`unchanged (${pin})`];
    case "finished":
      return [`the run has finished (${pin})`];
    case "unknown":
      return [`not compared: ${v.note ?? "?"}`];
    case "changed":
      return [
        `changed since the run was pinned (${pin}):`,
        ...(v.text ?? "").split("\n").map((l) => `  ${l.trim()}`),
        ...(v.note === null ? [] : [`  ${v.note}`]),
        `  choices when it is resumed: ${v.choices.join(", ")}`,
      ];
  }
}

/** The pin of `state`'s fingerprints in run `slug` of a store named by URL (`--store`), read without its lease. */
export async function storePin(store: PlanStore, slug: string, state: WorkflowState): Promise<unknown> {
  if (state.definitions === undefined) return undefined;
  try {
    const record = (await storeHistoryRecords(store, slug)).find((r) => r.stepId === PIN_KEY);
    if (record === undefined || !isPinOf({ ...record, key: record.stepId }, state)) return undefined;
    const out = await storeStepOutput(store, slug, record);
    return out.ok ? (JSON.parse(out.text) as unknown) : undefined;
  } catch {
    return undefined;
  }
}
