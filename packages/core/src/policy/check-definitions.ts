/**
 * `checkDefinitions`: may a live run continue on the definitions loaded now? A run records, at start, the
 * fingerprint of every workflow it can reach. The verdict compares them with the registry's:
 *  - `unchanged`: every recorded workflow is the same;
 *  - `changed`: some changed, but the current position still resolves (continue; `diff` says what changed);
 *  - `unknown`: the run recorded no fingerprints (started before they existed) and its position resolves;
 *  - a DEFINITIONS_CHANGED refusal when the position no longer resolves, with the diff and the choices
 *    (`cancel`, or `restart-scope`: start the workflow again). `advance` and `loop` refuse such a run too.
 */
import { workflowFingerprint } from "../definitions/fingerprint.js";
import type { WorkflowRegistry } from "../definitions/registry.js";
import { refusal, type Outcome } from "../errors/refusal.js";
import type { WorkflowState } from "../state/schema.js";
import { registryError, stateError } from "../transitions/arguments.js";
import { walkPath } from "../transitions/navigation.js";
import type { CommonCode } from "../transitions/types.js";

/** How one phase entry of a changed workflow differs, by position. */
export interface PhaseChange {
  readonly index: number;
  readonly change: "changed" | "added" | "removed";
}

/** One workflow the run started on that is different now. */
export interface WorkflowChange {
  readonly workflowKey: string;
  readonly change: "changed" | "removed";
  /** Per-position phase changes (empty for a removed workflow, or when only workflow fields changed). */
  readonly phases: readonly PhaseChange[];
}

/** What a caller may do with a run whose position no longer resolves. */
export type DefinitionsChoice = "cancel" | "restart-scope";

/** The verdict of checkDefinitions. */
export type DefinitionsVerdict = Outcome<
  | { readonly verdict: "unchanged"; readonly diff: readonly [] }
  | { readonly verdict: "changed"; readonly diff: readonly WorkflowChange[] }
  | { readonly verdict: "unknown"; readonly diff: readonly [] },
  CommonCode | "DEFINITIONS_CHANGED"
>;

/** Compares the run's recorded fingerprints with `registry`, and checks that its position still resolves. */
export function checkDefinitions(registry: WorkflowRegistry, state: WorkflowState): DefinitionsVerdict {
  const bad = registryError("definitions", registry) ?? stateError("definitions", state);
  if (bad !== undefined) return { ok: false, error: bad };
  const diff = diffOf(registry, state.definitions);
  const walked = walkPath("definitions", registry, state);
  if (!walked.ok) {
    const choices: readonly DefinitionsChoice[] = ["cancel", "restart-scope"];
    const error = refusal("definitions", "DEFINITIONS_CHANGED", `the definitions changed under run "${state.taskId}" and its position no longer resolves: ${walked.error.message}`, {
      field: walked.error.details.field,
      workflowKey: state.workflowKey,
      diff,
      choices,
      cause: walked.error.code,
      hint: "Cancel the run, or start the workflow again.",
    });
    return { ok: false, error };
  }
  if (state.definitions === undefined) return { ok: true, verdict: "unknown", diff: [] };
  return diff.length === 0 ? { ok: true, verdict: "unchanged", diff: [] } : { ok: true, verdict: "changed", diff };
}

function diffOf(registry: WorkflowRegistry, recorded: Readonly<Record<string, string>> | undefined): WorkflowChange[] {
  if (recorded === undefined) return [];
  const out: WorkflowChange[] = [];
  for (const key of Object.keys(recorded).sort()) {
    const before = recorded[key] as string;
    const def = registry.workflows.get(key);
    if (def === undefined) {
      out.push({ workflowKey: key, change: "removed", phases: [] });
      continue;
    }
    const now = registry.fingerprints.get(key) ?? workflowFingerprint(def);
    if (now === before) continue;
    out.push({ workflowKey: key, change: "changed", phases: phaseChanges(before, now) });
  }
  return out;
}

function phaseChanges(before: string, now: string): PhaseChange[] {
  const a = (before.split("/")[1] ?? "").split(".").filter((p) => p !== "");
  const b = (now.split("/")[1] ?? "").split(".").filter((p) => p !== "");
  const out: PhaseChange[] = [];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] === b[i]) continue;
    out.push({ index: i, change: a[i] === undefined ? "added" : b[i] === undefined ? "removed" : "changed" });
  }
  return out;
}
