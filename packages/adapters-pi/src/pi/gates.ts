/**
 * The gates on leaving a phase, for `workflow_step next` in pi. A `verify` gate runs its commands through the
 * verification policy and its cache (a pass against an unchanged workspace is not run again); while one fails,
 * `next` is refused and the agent gets the failing command's output. An `approve` gate needs a person: in pi it
 * refuses `next` with who it waits for (approval from pi's UI or `phasekit approve` is not wired into the
 * extension yet, see docs/gates.md), so a declared gate is never passed silently. Core judges (`judgeControls`).
 */
import path from "node:path";
import { judgeControls, NO_USAGE, type GateFacts } from "@phasekit/core";
import { createRunVerificationCache, type VerificationCache } from "../verification/cache.js";
import { resolveVerificationConfig } from "../verification/config.js";
import { runVerificationPolicy } from "../verification/policy.js";
import { active } from "./core-bridge.js";
import type { PiContext } from "./host.js";
import type { Runtime } from "./runtime.js";

/** The tool name verify gates run under (their cache entries and reports). */
export const GATE_TOOL = "phasekit-gate";

// One cache per runtime (one pi process): passes are remembered against the workspace state they ran on.
const caches = new WeakMap<Runtime, VerificationCache>();

/** Whether the current phase may be left: undefined when it may, else the refusal text for the agent. */
export async function gateRefusal(rt: Runtime, ctx: PiContext, signal?: AbortSignal): Promise<string | undefined> {
  const a = active(rt.state, rt.registry);
  const gates = a?.phase.gates;
  if (a === null || gates === undefined) return undefined;
  const facts: { verify?: GateFacts["verify"] } = {};
  if (gates.verify !== undefined) {
    let cache = caches.get(rt);
    if (cache === undefined) caches.set(rt, (cache = createRunVerificationCache()));
    const policy = resolveVerificationConfig(GATE_TOOL, undefined, {
      timing: "after",
      mode: "commands",
      stages: ["custom"],
      commands: [...gates.verify.commands],
      ...(gates.verify.timeoutMs === undefined ? {} : { timeoutMs: gates.verify.timeoutMs }),
    });
    // The run's own plan folder changes with every step; it must not defeat the cache (as in ctx.verify).
    const planRoot = path.resolve(ctx.cwd, typeof rt.options.planRoot === "string" ? rt.options.planRoot : "ai_plan");
    const outcome = await runVerificationPolicy({ policy, cwd: ctx.cwd, tool: GATE_TOOL, phase: a.phase.id, cache, fingerprint: { exclude: [planRoot] }, ...(signal ? { signal } : {}) });
    facts.verify = outcome.ok ? { passed: true } : { passed: false, command: outcome.failed.command, output: outcome.failed.outputTail };
  }
  const j = judgeControls(a, { workflowUsed: NO_USAGE, phaseUsed: NO_USAGE, gates: facts });
  if (!j.ok || j.judgement.gate.pass) return undefined;
  const g = j.judgement.gate;
  if (g.gate === "approve") return `${g.reason}\nThe workflow waits for a person to approve this phase; tell the user and stop.`;
  return g.reason;
}
