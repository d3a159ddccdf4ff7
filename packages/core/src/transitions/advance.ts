/**
 * `advance`: the seed's four cases on the innermost scope, after the whole path has been walked and checked.
 *  1. the top rests on a reference (a migrated state) → enter it, down to a concrete phase;
 *  2. a concrete phase that is not the last of its scope → the next entry (entering it if it is a reference);
 *  3. the last phase of the root → the run is completed;
 *  4. the last phase of a sub-workflow → leave it, and keep leaving every parent that is finished too, then
 *     move the first unfinished parent on (entering a reference there), or complete the run at the root.
 * The advance itself counts one step; every sub-workflow entered counts one more; leaving counts nothing.
 */
import type { WorkflowRegistry } from "../definitions/registry.js";
import type { PathSegment, WorkflowState } from "../state/schema.js";
import { applyMove, type Guard, type Move } from "./apply.js";
import { enterReferences, neighbour, phaseRef, segment, walkPath, type Level } from "./navigation.js";
import type { RefusalCode, TransitionContext, TransitionOutcome } from "./types.js";

const SCOPE = "advance";
const NONE: readonly string[] = Object.freeze([]);

/** Accepts running runs only. */
export const RUNNING: Guard<"NOT_RUNNING"> = { accepts: (s) => s === "running", code: "NOT_RUNNING", wanted: "running" };

/** Moves a running workflow to the next concrete phase, or completes it. Refuses a path that does not resolve. */
export function advance(registry: WorkflowRegistry, state: WorkflowState, ctx: TransitionContext): TransitionOutcome<RefusalCode<"advance">> {
  return applyMove(SCOPE, registry, state, ctx, RUNNING, () => advanceMove(registry, state));
}

/** The move of `advance` (no bookkeeping). */
export function advanceMove(registry: WorkflowRegistry, state: WorkflowState): Move<RefusalCode<"advance">> {
  const walked = walkPath(SCOPE, registry, state);
  if (!walked.ok) return walked;
  const levels = walked.levels;
  const path = state.currentPath;
  const top = levels[levels.length - 1] as Level;
  if ("subworkflow" in top.entry) {
    const next = path.slice();
    const r = enterReferences(SCOPE, registry, next);
    if (!r.ok) return r;
    const to = phaseRef((next[next.length - 1] as PathSegment).workflowKey, r.phase, next.length);
    return { ok: true, change: { currentPath: next, steps: r.entered.length }, happened: { type: "entered-subworkflow", advanceCase: 1, to, entered: r.entered } };
  }
  const from = phaseRef(top.key, top.entry, path.length);
  const next = neighbour(levels, 1);
  if (next === null) {
    const exited = exitedKeys(levels, 0);
    return { ok: true, change: { status: "completed", steps: 1 }, happened: { type: "completed", advanceCase: exited.length === 0 ? 3 : 4, from, exited } };
  }
  const { depth, entry } = next;
  const seg = path[depth] as PathSegment;
  const nextPath = path.slice(0, depth + 1);
  nextPath[depth] = segment(seg.workflowKey, seg.phaseIndex + 1, seg.loops);
  const exited = exitedKeys(levels, depth);
  if (!("subworkflow" in entry) && exited.length === 0) {
    return { ok: true, change: { currentPath: nextPath, steps: 1 }, happened: { type: "advanced", advanceCase: 2, from, to: phaseRef(seg.workflowKey, entry, nextPath.length), entered: NONE } };
  }
  const r = enterReferences(SCOPE, registry, nextPath);
  if (!r.ok) return r;
  const to = phaseRef((nextPath[nextPath.length - 1] as PathSegment).workflowKey, r.phase, nextPath.length);
  const change = { currentPath: nextPath, steps: 1 + r.entered.length };
  if (exited.length === 0) return { ok: true, change, happened: { type: "advanced", advanceCase: 2, from, to, entered: r.entered } };
  return { ok: true, change, happened: { type: "exited-subworkflow", advanceCase: 4, from, to, exited, entered: r.entered } };
}

/** The keys of the levels below `depth`, innermost first (the scopes an advance leaves). */
function exitedKeys(levels: readonly Level[], depth: number): string[] {
  const out: string[] = [];
  for (let d = levels.length - 1; d > depth; d--) out.push((levels[d] as Level).key);
  return out;
}

