/**
 * `advance`: the seed's four cases on the innermost scope.
 *  1. the top rests on a reference (a migrated state) → enter it, down to a concrete phase;
 *  2. a concrete phase that is not the last of its scope → the next entry (entering it if it is a reference);
 *  3. the last phase of the root → the run is completed;
 *  4. the last phase of a sub-workflow → leave it, and keep leaving every parent that is finished too, then
 *     move the first unfinished parent on (entering a reference there), or complete the run at the root.
 * The advance itself counts one step; every sub-workflow entered counts one more; leaving counts nothing.
 */
import type { PhaseDefinition, WorkflowDefinition, WorkflowRegistry } from "../definitions/schema.js";
import { WorkflowError } from "../errors/workflow-error.js";
import { definitionAt, enterReferences, entryAt, phaseRef } from "./navigation.js";
import type { PathSegment, WorkflowState } from "../state/schema.js";
import { clockError, refuse, statusError } from "./helpers.js";
import type { Happening, PhaseRef, TransitionContext, TransitionOutcome } from "./types.js";

const SCOPE = "advance";

/** Moves a running workflow to the next concrete phase, or completes it. */
export function advance(state: WorkflowState, registry: WorkflowRegistry, ctx: TransitionContext): TransitionOutcome {
  if (state.status !== "running") return refuse(state, statusError(SCOPE, state, "NOT_RUNNING", "running"));
  const clock = clockError(SCOPE, ctx);
  if (clock) return refuse(state, clock);
  const path = state.currentPath;
  const depth = path.length - 1;
  const top = path[depth] as PathSegment;
  const def = definitionAt(SCOPE, registry, top.workflowKey, depth);
  if (def instanceof WorkflowError) return refuse(state, def);
  const entry = entryAt(SCOPE, def, top.workflowKey, top.phaseIndex, depth);
  if (entry instanceof WorkflowError) return refuse(state, entry);
  if ("subworkflow" in entry) return enterCurrent(state, registry, ctx);
  const from = phaseRef(top.workflowKey, entry, path.length);
  if (top.phaseIndex + 1 < def.phases.length) return nextInScope(state, registry, ctx, def, from);
  return leaveScopes(state, registry, ctx, from);
}

/** Case 1: the top rests on a reference; enter it (and any reference it starts with). */
function enterCurrent(state: WorkflowState, registry: WorkflowRegistry, ctx: TransitionContext): TransitionOutcome {
  const path = state.currentPath.slice();
  const r = enterReferences(SCOPE, registry, path);
  if (!r.ok) return refuse(state, r.error);
  const to = phaseRef((path[path.length - 1] as PathSegment).workflowKey, r.phase, path.length);
  return moved(state, ctx, path, r.entered.length, { type: "entered-subworkflow", advanceCase: 1, to, entered: r.entered });
}

/** Case 2: the next entry of the same scope; the fast path when that entry is a concrete phase. */
function nextInScope(state: WorkflowState, registry: WorkflowRegistry, ctx: TransitionContext, def: WorkflowDefinition, from: PhaseRef): TransitionOutcome {
  const old = state.currentPath;
  const depth = old.length - 1;
  const top = old[depth] as PathSegment;
  const index = top.phaseIndex + 1;
  const path = old.slice();
  path[depth] = { workflowKey: top.workflowKey, phaseIndex: index, loops: top.loops };
  const next = def.phases[index] as PhaseDefinition | { subworkflow: string };
  if (!("subworkflow" in next)) {
    return moved(state, ctx, path, 1, { type: "advanced", advanceCase: 2, from, to: phaseRef(top.workflowKey, next, old.length), entered: NONE });
  }
  const r = enterReferences(SCOPE, registry, path);
  if (!r.ok) return refuse(state, r.error);
  const to = phaseRef((path[path.length - 1] as PathSegment).workflowKey, r.phase, path.length);
  return moved(state, ctx, path, 1 + r.entered.length, { type: "advanced", advanceCase: 2, from, to, entered: r.entered });
}

const NONE: readonly string[] = Object.freeze([]);

/** Cases 3 and 4: pop finished scopes until one can move on, or complete the run at the root. */
function leaveScopes(state: WorkflowState, registry: WorkflowRegistry, ctx: TransitionContext, from: PhaseRef): TransitionOutcome {
  const old = state.currentPath;
  const exited: string[] = [];
  for (let depth = old.length - 1; depth > 0; ) {
    exited.push((old[depth] as PathSegment).workflowKey);
    depth -= 1;
    const parent = old[depth] as PathSegment;
    const def = definitionAt(SCOPE, registry, parent.workflowKey, depth);
    if (def instanceof WorkflowError) return refuse(state, def);
    const here = entryAt(SCOPE, def, parent.workflowKey, parent.phaseIndex, depth);
    if (here instanceof WorkflowError) return refuse(state, here);
    if (parent.phaseIndex + 1 >= def.phases.length) continue;
    const path = old.slice(0, depth + 1);
    path[depth] = { workflowKey: parent.workflowKey, phaseIndex: parent.phaseIndex + 1, loops: parent.loops };
    const r = enterReferences(SCOPE, registry, path);
    if (!r.ok) return refuse(state, r.error);
    const to = phaseRef((path[path.length - 1] as PathSegment).workflowKey, r.phase, path.length);
    return moved(state, ctx, path, 1 + r.entered.length, { type: "exited-subworkflow", advanceCase: 4, from, to, exited, entered: r.entered });
  }
  const next: WorkflowState = {
    ...state,
    status: "completed",
    globalStepCount: state.globalStepCount + 1,
    generation: state.generation + 1,
    updatedAt: ctx.now,
    finishedAt: ctx.now,
    completionNotified: false,
    cancelPending: false,
  };
  return { ok: true, state: next, happened: { type: "completed", advanceCase: exited.length === 0 ? 3 : 4, from, exited } };
}

function moved(state: WorkflowState, ctx: TransitionContext, path: PathSegment[], steps: number, happened: Happening): TransitionOutcome {
  const next: WorkflowState = {
    ...state,
    currentPath: path,
    globalStepCount: state.globalStepCount + steps,
    generation: state.generation + 1,
    updatedAt: ctx.now,
    cancelPending: false,
  };
  return { ok: true, state: next, happened };
}
