/**
 * `loop`: restart the innermost scope at its phase 0, entering a reference there at once. Refused when the path
 * does not resolve, when that workflow is not loopable, or when this scope instance has already looped
 * `maxLoops` times.
 */
import type { WorkflowRegistry } from "../definitions/registry.js";
import { refusal } from "../errors/refusal.js";
import type { PathSegment, WorkflowState } from "../state/schema.js";
import { applyMove, type Move } from "./apply.js";
import { RUNNING } from "./advance.js";
import { enterReferences, phaseRef, segment, walkPath, type Level } from "./navigation.js";
import type { RefusalCode, TransitionContext, TransitionOutcome } from "./types.js";

const SCOPE = "loop";

/** Restarts the innermost scope; counts one step for the loop and one per sub-workflow entered. */
export function loop(registry: WorkflowRegistry, state: WorkflowState, ctx: TransitionContext): TransitionOutcome<RefusalCode<"loop">> {
  return applyMove(SCOPE, registry, state, ctx, RUNNING, () => loopMove(registry, state));
}

/** The move of `loop` (no bookkeeping). */
export function loopMove(registry: WorkflowRegistry, state: WorkflowState): Move<RefusalCode<"loop">> {
  const walked = walkPath(SCOPE, registry, state);
  if (!walked.ok) return walked;
  const old = state.currentPath;
  const depth = old.length - 1;
  const top = old[depth] as PathSegment;
  const def = (walked.levels[depth] as Level).def;
  if (!def.loopable) {
    return {
      ok: false,
      error: refusal(SCOPE, "NOT_LOOPABLE", `workflow "${top.workflowKey}" (${def.name}) cannot loop: looping is disabled for it.`, {
        field: "loopable",
        value: false,
        workflowKey: top.workflowKey,
        hint: `Advance with action "next" instead, or set "loopable": true in "${top.workflowKey}".`,
      }),
    };
  }
  if (def.maxLoops !== undefined && top.loops >= def.maxLoops) {
    return {
      ok: false,
      error: refusal(SCOPE, "MAX_LOOPS_REACHED", `workflow "${top.workflowKey}" (${def.name}) has looped ${top.loops} of ${def.maxLoops} allowed time(s) in this scope.`, {
        field: "maxLoops",
        value: def.maxLoops,
        workflowKey: top.workflowKey,
        hint: `Advance with action "next" instead, or raise "maxLoops" in "${top.workflowKey}".`,
      }),
    };
  }
  const path = old.slice();
  const loops = top.loops + 1;
  path[depth] = segment(top.workflowKey, 0, loops);
  const r = enterReferences(SCOPE, registry, path);
  if (!r.ok) return r;
  const to = phaseRef((path[path.length - 1] as PathSegment).workflowKey, r.phase, path.length);
  return {
    ok: true,
    change: { currentPath: path, steps: 1 + r.entered.length, loops: 1 },
    happened: { type: "looped", workflowKey: top.workflowKey, loops, maxLoops: def.maxLoops, to, entered: r.entered },
  };
}
