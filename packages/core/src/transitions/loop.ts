/**
 * `loop`: restart the innermost scope at its phase 0, entering a reference there at once. Refused when that
 * workflow is not loopable, or when this scope instance has already looped `maxLoops` times.
 */
import type { WorkflowRegistry } from "../definitions/schema.js";
import { WorkflowError, workflowError } from "../errors/workflow-error.js";
import { definitionAt, enterReferences, phaseRef } from "./navigation.js";
import type { PathSegment, WorkflowState } from "../state/schema.js";
import { clockError, refuse, statusError } from "./helpers.js";
import type { TransitionContext, TransitionOutcome } from "./types.js";

const SCOPE = "loop";

/** Restarts the innermost scope; counts one step for the loop and one per sub-workflow entered. */
export function loop(state: WorkflowState, registry: WorkflowRegistry, ctx: TransitionContext): TransitionOutcome {
  if (state.status !== "running") return refuse(state, statusError(SCOPE, state, "NOT_RUNNING", "running"));
  const clock = clockError(SCOPE, ctx);
  if (clock) return refuse(state, clock);
  const old = state.currentPath;
  const depth = old.length - 1;
  const top = old[depth] as PathSegment;
  const def = definitionAt(SCOPE, registry, top.workflowKey, depth);
  if (def instanceof WorkflowError) return refuse(state, def);
  if (!def.loopable) {
    return refuse(
      state,
      workflowError(SCOPE, "NOT_LOOPABLE", `workflow "${top.workflowKey}" (${def.name}) cannot loop: looping is disabled for it.`, {
        field: "loopable",
        value: false,
        workflowKey: top.workflowKey,
        hint: `Advance with action "next" instead, or set "loopable": true in "${top.workflowKey}".`,
      }),
    );
  }
  if (def.maxLoops !== undefined && top.loops >= def.maxLoops) {
    return refuse(
      state,
      workflowError(SCOPE, "MAX_LOOPS_REACHED", `workflow "${top.workflowKey}" (${def.name}) has looped ${top.loops} of ${def.maxLoops} allowed time(s) in this scope.`, {
        field: "maxLoops",
        value: def.maxLoops,
        workflowKey: top.workflowKey,
        hint: `Advance with action "next" instead, or raise "maxLoops" in "${top.workflowKey}".`,
      }),
    );
  }
  const path = old.slice();
  const loops = top.loops + 1;
  path[depth] = { workflowKey: top.workflowKey, phaseIndex: 0, loops };
  const r = enterReferences(SCOPE, registry, path);
  if (!r.ok) return refuse(state, r.error);
  const next: WorkflowState = {
    ...state,
    currentPath: path,
    globalStepCount: state.globalStepCount + 1 + r.entered.length,
    loopCount: state.loopCount + 1,
    generation: state.generation + 1,
    updatedAt: ctx.now,
    cancelPending: false,
  };
  const to = phaseRef((path[path.length - 1] as PathSegment).workflowKey, r.phase, path.length);
  return { ok: true, state: next, happened: { type: "looped", workflowKey: top.workflowKey, loops, maxLoops: def.maxLoops, to, entered: r.entered } };
}
