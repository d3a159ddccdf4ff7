/**
 * `carryPosition`: a live run goes on with new definitions at the same phase. Each level of its path is carried
 * over by identity (a phase's id, a reference's key), not by index, so a phase inserted, removed or moved before
 * the current one does not move the run. Refused when the phase (or an enclosing reference) no longer exists
 * in the new definitions: the run never lands on another phase silently; `restartScope` or a cancel is the way
 * out then. The run records the fingerprints of the definitions it now goes on with, so `checkDefinitions` sees
 * it unchanged afterwards. No step is counted: the run did not move in its workflow.
 */
import type { WorkflowRegistry } from "../definitions/registry.js";
import type { PhaseEntry } from "../definitions/schema.js";
import { refusal, type Refusal } from "../errors/refusal.js";
import type { PathSegment, WorkflowState } from "../state/schema.js";
import { applyMove, type Move } from "./apply.js";
import { registryError } from "./arguments.js";
import { LIVE } from "./cancel.js";
import { descend, segment, walkPath, type Level } from "./navigation.js";
import { reachableFingerprints } from "./start.js";
import type { CommonCode, PathCode, TransitionContext, TransitionOutcome } from "./types.js";

const SCOPE = "carry-position";

/** The refusal codes of `carryPosition`. */
export type CarryCode = CommonCode | "NOT_RUNNING" | PathCode | "DEFINITIONS_CHANGED";

/**
 * Moves the run of `state`, whose position is read in `pinned` (the definitions it was on), onto `registry` at
 * the same phase ids; `DEFINITIONS_CHANGED` when one of them is gone there.
 */
export function carryPosition(registry: WorkflowRegistry, state: WorkflowState, pinned: WorkflowRegistry, ctx: TransitionContext): TransitionOutcome<CarryCode> {
  if (registryError(SCOPE, pinned) !== undefined) {
    const hint = "Pass the definitions the run was on (a registry from compileDefinitions) as `pinned`.";
    return { ok: false, error: refusal(SCOPE, "INVALID_REGISTRY", "the pinned argument is not a registry made by compileDefinitions.", { field: "pinned", hint }) };
  }
  return applyMove(SCOPE, registry, state, ctx, LIVE, () => carryMove(registry, state, pinned));
}

/** What names an entry across edits (a phase's id, a reference's key), kinds kept apart: the diff's identity. */
function sameEntry(a: PhaseEntry, b: PhaseEntry): boolean {
  return "subworkflow" in a ? "subworkflow" in b && a.subworkflow === b.subworkflow : !("subworkflow" in b) && a.id === b.id;
}

function carryMove(registry: WorkflowRegistry, state: WorkflowState, pinned: WorkflowRegistry): Move<CarryCode> {
  const walked = walkPath(SCOPE, pinned, state);
  if (!walked.ok) return walked;
  const path: PathSegment[] = [];
  let shifted = 0;
  for (let d = 0; d < walked.levels.length; d++) {
    const l = walked.levels[d] as Level;
    const seg = state.currentPath[d] as PathSegment;
    const at = registry.workflows.get(l.key)?.phases.findIndex((e) => sameEntry(e, l.entry)) ?? -1;
    if (at < 0) return { ok: false, error: gone(state, l, d) };
    if (at !== seg.phaseIndex) shifted += 1;
    path.push(segment(seg.workflowKey, at, seg.loops));
  }
  // The carried path fits the new definitions (same workflows, same references): walk it to get the phase.
  const top = path[path.length - 1] as PathSegment;
  const entry = registry.workflows.get(top.workflowKey)?.phases[top.phaseIndex] as PhaseEntry;
  const to = descend(SCOPE, registry, entry, top.workflowKey, path.length - 1, "first");
  if (!to.ok) return to;
  return {
    ok: true,
    change: { currentPath: path, steps: 0, definitions: reachableFingerprints(registry, state.workflowKey) },
    happened: { type: "carried", to: to.ref, shifted },
  };
}

function gone(state: WorkflowState, l: Level, depth: number): Refusal<"DEFINITIONS_CHANGED"> {
  const what = "subworkflow" in l.entry ? `the reference to "${l.entry.subworkflow}"` : `phase "${l.entry.id}"`;
  return refusal(SCOPE, "DEFINITIONS_CHANGED", `${what} of workflow "${l.key}", where run "${state.taskId}" is (currentPath[${depth}]), is not in the new definitions.`, {
    field: `currentPath[${depth}].phaseIndex`,
    value: l.index,
    workflowKey: l.key,
    hint: "Keep the definitions the run started with, restart the current scope (restartScope), or cancel the run.",
  });
}
