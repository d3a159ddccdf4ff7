/**
 * A gate's "no" that the definition routes (onFail / onReject), in pi: core's `route` decides where the run goes
 * and whether the scope's loop limit still allows it; this file only carries that into the tool's answer.
 */
import { refusalToError, route, type GateOutcome } from "@phasekit/core";
import type { Step, WorkflowRegistry, WorkflowState } from "./core-bridge.js";

/** Core's `route` as a pi Step (a refusal keeps `state`). */
export function routeRun(on: GateOutcome, state: WorkflowState, registry: WorkflowRegistry, now: number): Step {
  const r = route(registry, state, on, { now });
  return r.ok ? { ok: true, state: r.state, happened: r.happened } : { ok: false, error: refusalToError(r.error), state };
}

/** The refusal text when the route itself is refused (MAX_LOOPS_REACHED, NO_ROUTE): the run stays in the phase. */
export function routeRefusedText(on: GateOutcome, gateReason: string, error: { message: string; details?: { hint?: unknown } }): string {
  const stay = on === "fail" ? "fix what the verify gate reports here" : "address the rejection here";
  return `${gateReason}\n${error.message} The run stays in this phase: ${stay}, then call workflow_step next again.`;
}
