/**
 * The gates on leaving a phase, for `workflow_step next` in pi. A `verify` gate runs its commands through the
 * verification policy and its cache (a pass against an unchanged workspace is not run again); while one fails,
 * `next` is refused and the agent gets the failing command's output. An `approve` gate needs a person: in pi it
 * refuses `next` with who it waits for (approval from pi's UI or `phasekit approve` is not wired into the
 * extension yet, see docs/gates.md), so a declared gate is never passed silently. Core judges (`judgeControls`)
 * and, where the definition routes a "no" (onFail / onReject), moves the run (`route`, see gate-route.ts).
 */
import path from "node:path";
import { judgeControls, NO_USAGE, validateApproval, type GateFacts, type GateOutcome } from "@phasekit/core";
import type { ControlRequest } from "../store/control-signals.js";
import { createRunVerificationCache, type VerificationCache } from "../verification/cache.js";
import { resolveVerificationConfig } from "../verification/config.js";
import { runVerificationPolicy } from "../verification/policy.js";
import { active } from "./core-bridge.js";
import { clearHonoured, pendingRequest } from "./control.js";
import { forgetUiDecision, uiDecision } from "./ui-approval.js";
import type { PiContext } from "./host.js";
import type { Runtime } from "./runtime.js";

/** The tool name verify gates run under (their cache entries and reports). */
export const GATE_TOOL = "phasekit-gate";

// One cache per runtime (one pi process): passes are remembered against the workspace state they ran on.
const caches = new WeakMap<Runtime, VerificationCache>();

/**
 * The verdict on leaving the current phase: refused with the text for the agent; passed (`passed` runs after the
 * advance is committed); or a "no" the definition routes (onFail / onReject: the caller asks core's `route` and
 * runs `done` once that is settled, committed or refused).
 */
export type GateCheck =
  | { refused: string; route?: undefined }
  | { refused?: undefined; route?: undefined; passed?: () => Promise<void>; /** The approval that passed the gate (its checked payload). */ approval?: { data: unknown } }
  | { refused?: undefined; route: GateOutcome; reason: string; done: () => Promise<void> };

/** The status-bar key that says who an open gate waits for. */
export const GATE_STATUS_KEY = "workflow-gate";

/** Whether the current phase may be left now; the status bar says who an open gate waits for. */
export async function checkGates(rt: Runtime, ctx: PiContext, signal?: AbortSignal): Promise<GateCheck> {
  const check = await judgeGates(rt, ctx, signal);
  const a = active(rt.state, rt.registry);
  const text = check.refused === undefined ? undefined : check.refused.includes("waits for a person's approval") ? `⏸ ${a?.phase.name ?? "phase"} waits for a person's approval (/workflow-approve)` : `✗ ${a?.phase.name ?? "phase"}: a gate holds it (the agent fixes it)`;
  try {
    ctx.ui.setStatus(GATE_STATUS_KEY, text);
  } catch {
    // a stale ctx (session replaced): the next check shows it
  }
  return check;
}

async function judgeGates(rt: Runtime, ctx: PiContext, signal?: AbortSignal): Promise<GateCheck> {
  const a = active(rt.state, rt.registry);
  const gates = a?.phase.gates;
  if (a === null || gates === undefined) return {};
  const facts: { verify?: GateFacts["verify"]; approval?: GateFacts["approval"] } = {};
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
  let request: ControlRequest | null = null;
  let refusedPayload = "";
  const inPi = uiDecision(rt, a.state.taskId, a.phase.id);
  if (gates.approve !== undefined && (facts.verify === undefined || facts.verify.passed) && inPi !== undefined) {
    facts.approval = inPi.decision === "reject" ? { decision: "rejected", reason: inPi.reason } : { decision: "approved", data: inPi.data };
  } else if (gates.approve !== undefined && (facts.verify === undefined || facts.verify.passed)) {
    request = await pendingRequest(rt, ctx, "approve");
    const decision = request?.approval;
    if (request !== null && decision !== undefined && (decision.name === undefined || decision.name === a.phase.id)) {
      if (decision.decision === "reject") facts.approval = { decision: "rejected", reason: request.reason };
      else {
        const valid = validateApproval(gates.approve.schema, decision.data ?? null);
        if (valid.ok) facts.approval = { decision: "approved", data: valid.data };
        else {
          refusedPayload = `\nAn approval was filed but refused: ${valid.error.message}`;
          await clearHonoured(rt, ctx, request);
        }
      }
    }
  }
  const j = judgeControls(a, { workflowUsed: NO_USAGE, phaseUsed: NO_USAGE, gates: facts });
  if (!j.ok) return {};
  const g = j.judgement.gate;
  if (g.pass) {
    const taken = request;
    const approval = facts.approval?.decision === "approved" ? { approval: { data: facts.approval.data } } : {};
    if (inPi !== undefined && facts.approval !== undefined) return { passed: async () => forgetUiDecision(rt, inPi), ...approval };
    return taken === null ? approval : { passed: () => clearHonoured(rt, ctx, taken), ...approval };
  }
  if (g.routeTo !== undefined && (g.state === "failed" || g.state === "rejected")) {
    const taken = request;
    return {
      route: g.state === "failed" ? "fail" : "reject",
      reason: g.reason,
      done: async () => {
        if (inPi !== undefined && g.state === "rejected") forgetUiDecision(rt, inPi);
        if (taken !== null) await clearHonoured(rt, ctx, taken);
      },
    };
  }
  if (g.gate === "approve" && g.state === "rejected" && request !== null) await clearHonoured(rt, ctx, request);
  if (g.gate === "approve" && g.state === "rejected" && inPi !== undefined) forgetUiDecision(rt, inPi);
  if (g.gate === "approve" && g.state === "waiting") {
    const id = a.state.taskId;
    return { refused: `${g.reason}${refusedPayload}\nA person approves in pi with /workflow-approve, or from a shell with: phasekit approve ${id} --name ${a.phase.id}${gates.approve?.schema === undefined ? "" : " --data '<JSON>'"}. Tell the user and stop until then.` };
  }
  return { refused: g.reason };
}
