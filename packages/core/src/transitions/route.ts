/**
 * `route`: where a gate's "no" sends the run. A failed `verify` goes to the phase `gates.onFail` names, a rejected
 * approval to `gates.onReject`; both are phases of the same workflow (compile checks it), so the move stays in the
 * innermost scope. Going there counts as a loop of that scope: `maxLoops` bounds it (MAX_LOOPS_REACHED), so a
 * Build ⇄ Test cycle cannot run forever. `loopable` is not required: the definition declared this route itself.
 * Adapters report only what the gate said (`on`); the target and the limit are decided here.
 */
import type { WorkflowRegistry } from "../definitions/registry.js";
import { isSubworkflowRef, type PhaseDefinition } from "../definitions/schema.js";
import { refusal } from "../errors/refusal.js";
import type { PathSegment, WorkflowState } from "../state/schema.js";
import { applyMove, type Move } from "./apply.js";
import { RUNNING } from "./advance.js";
import { argumentError, optionError } from "./arguments.js";
import { phaseRef, segment, walkPath, type Level } from "./navigation.js";
import type { GateOutcome, RefusalCode, TransitionContext, TransitionOutcome } from "./types.js";

const SCOPE = "route";
const FIELD: Record<GateOutcome, "onFail" | "onReject"> = { fail: "onFail", reject: "onReject" };
const GATE: Record<GateOutcome, "verify" | "approve"> = { fail: "verify", reject: "approve" };

/** Moves a running run to where the current phase's gate routes `on` ("fail": onFail, "reject": onReject). */
export function route(registry: WorkflowRegistry, state: WorkflowState, on: GateOutcome, ctx: TransitionContext): TransitionOutcome<RefusalCode<"route">> {
  if (on !== "fail" && on !== "reject") {
    const bad = argumentError(SCOPE, registry, ctx) ?? optionError(SCOPE, "on", 'must be "fail" or "reject"', on, 'Pass "fail" for a failed verify gate, "reject" for a rejected approval.');
    return { ok: false, error: bad };
  }
  return applyMove(SCOPE, registry, state, ctx, RUNNING, () => routeMove(registry, state, on));
}

/** The move of `route` (no bookkeeping). */
export function routeMove(registry: WorkflowRegistry, state: WorkflowState, on: GateOutcome): Move<RefusalCode<"route">> {
  const walked = walkPath(SCOPE, registry, state);
  if (!walked.ok) return walked;
  const depth = state.currentPath.length - 1;
  const top = walked.levels[depth] as Level;
  const seg = state.currentPath[depth] as PathSegment;
  const field = FIELD[on];
  const target = isSubworkflowRef(top.entry) ? undefined : top.entry.gates?.[field];
  const index = target === undefined ? -1 : top.def.phases.findIndex((p) => !isSubworkflowRef(p) && p.id === target);
  if (isSubworkflowRef(top.entry) || target === undefined || index < 0) {
    const where = isSubworkflowRef(top.entry) ? `the run rests on sub-workflow "${top.entry.subworkflow}"` : `phase "${top.entry.id}" of workflow "${top.key}"`;
    const why = target === undefined ? `declares no gates.${field}` : `routes to "${target}", which is not a phase of it`;
    return {
      ok: false,
      error: refusal(SCOPE, "NO_ROUTE", `${where} ${why}: a ${on === "fail" ? "failed verify" : "rejected approval"} keeps the run where it is.`, {
        field: `gates.${field}`,
        value: target,
        workflowKey: top.key,
        hint: `Stay in the phase (the ${GATE[on]} gate refuses to let it go), or declare gates.${field}: <phase id> in the definition.`,
      }),
    };
  }
  if (top.def.maxLoops !== undefined && seg.loops >= top.def.maxLoops) {
    return {
      ok: false,
      error: refusal(SCOPE, "MAX_LOOPS_REACHED", `workflow "${top.key}" (${top.def.name}) has gone back ${seg.loops} of ${top.def.maxLoops} allowed time(s) in this scope; ${field} "${target}" is not taken again.`, {
        field: "maxLoops",
        value: top.def.maxLoops,
        workflowKey: top.key,
        hint: `The run stays in the phase: fix what the ${GATE[on]} gate reports, or raise "maxLoops" in "${top.key}".`,
      }),
    };
  }
  const phase = top.def.phases[index] as PhaseDefinition;
  const path = state.currentPath.slice();
  const loops = seg.loops + 1;
  path[depth] = segment(seg.workflowKey, index, loops);
  const from = phaseRef(top.key, top.entry, path.length);
  const to = phaseRef(top.key, phase, path.length);
  return {
    ok: true,
    change: { currentPath: path, steps: 1, loops: 1 },
    happened: { type: "routed", on, workflowKey: top.key, loops, maxLoops: top.def.maxLoops, from, to },
  };
}
