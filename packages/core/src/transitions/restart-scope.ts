/**
 * `restartScope`: the way out for a run whose definitions changed under it (see `checkDefinitions`). The run
 * goes back to phase 0 of the innermost scope that still stands: the deepest level of its path whose workflow
 * exists and is still referenced from the level above at the same place. References there are entered, as on
 * `start`. Unlike `loop` it ignores `loopable` and `maxLoops` (it is a repair the user chose, not the workflow's
 * own loop) and works on a path that no longer resolves. A paused run stays paused. The run records the
 * fingerprints of the definitions it goes on with, so `checkDefinitions` finds them unchanged afterwards.
 */
import type { WorkflowRegistry } from "../definitions/registry.js";
import { refusal } from "../errors/refusal.js";
import type { PathSegment, WorkflowState } from "../state/schema.js";
import { applyMove, type Move } from "./apply.js";
import { LIVE } from "./cancel.js";
import { enterReferences, phaseRef, segment } from "./navigation.js";
import { reachableFingerprints } from "./start.js";
import type { RefusalCode, TransitionContext, TransitionOutcome } from "./types.js";

const SCOPE = "restart-scope";

/**
 * How many leading levels of the path still stand (0 when even the root workflow is gone): level d stands when
 * its workflow exists and level d-1 stands and references it at the recorded index.
 */
export function standingLevels(registry: WorkflowRegistry, path: readonly PathSegment[]): number {
  let n = 0;
  for (const seg of path) {
    if (!registry.workflows.has(seg.workflowKey)) break;
    const above = n === 0 ? undefined : path[n - 1];
    if (above !== undefined) {
      const entry = registry.workflows.get(above.workflowKey)?.phases[above.phaseIndex];
      if (entry === undefined || !("subworkflow" in entry) || entry.subworkflow !== seg.workflowKey) break;
    }
    n += 1;
  }
  return n;
}

/** Restarts the innermost standing scope at its first phase; one step, plus one per sub-workflow entered. */
export function restartScope(registry: WorkflowRegistry, state: WorkflowState, ctx: TransitionContext): TransitionOutcome<RefusalCode<"restart-scope">> {
  return applyMove(SCOPE, registry, state, ctx, LIVE, () => restartScopeMove(registry, state));
}

/** The move of `restartScope` (no bookkeeping). */
export function restartScopeMove(registry: WorkflowRegistry, state: WorkflowState): Move<RefusalCode<"restart-scope">> {
  const old = state.currentPath;
  const root = old[0];
  const n = root === undefined || root.workflowKey !== state.workflowKey ? 0 : standingLevels(registry, old);
  if (n === 0) {
    return {
      ok: false,
      error: refusal(SCOPE, "MISSING_DEFINITION", `workflow "${state.workflowKey}" of run "${state.taskId}" is not among the loaded definitions, so no scope of it can restart.`, {
        field: "currentPath[0].workflowKey",
        value: state.workflowKey,
        workflowKey: state.workflowKey,
        hint: `Restore the definition of "${state.workflowKey}", or cancel the run.`,
      }),
    };
  }
  const kept = old[n - 1] as PathSegment;
  const path = [...old.slice(0, n - 1), segment(kept.workflowKey, 0, kept.loops)];
  const r = enterReferences(SCOPE, registry, path);
  if (!r.ok) return r;
  const to = phaseRef((path[path.length - 1] as PathSegment).workflowKey, r.phase, path.length);
  return {
    ok: true,
    // The run goes on with these definitions now: it records their fingerprints (checkDefinitions: unchanged).
    change: { currentPath: path, steps: 1 + r.entered.length, definitions: reachableFingerprints(registry, state.workflowKey) },
    happened: { type: "restarted-scope", workflowKey: kept.workflowKey, dropped: old.length - n, to, entered: r.entered },
  };
}
