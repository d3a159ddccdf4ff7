/**
 * The `workflow_step` tool: `next`, `loop`, `cancel` (two-step), `status`, with an optional `summary` kept in
 * the session. The context prompt is injected once per prompt, so within one agent run the model learns the
 * new phase only from this tool's result: `next` and `loop` return the new phase's full context. Refusals are
 * thrown, which both hosts turn into an error result.
 */
import { active, contextPrompt, move, stepResultLine, type WorkflowState } from "./core-bridge.js";
import type { PiContext, PiToolDefinition, PiToolResult } from "./host.js";
import type { Continuation } from "./continuation.js";
import { honourControl, lostPauseText } from "./control.js";
import type { Runtime } from "./runtime.js";
import { SUMMARY_ENTRY, summariesOf } from "./session-entries.js";
import { stepCallComponent, stepResultComponent } from "./renderers.js";
import { checkGates, type GateCheck } from "./gates.js";
import { routeRefusedText, routeRun } from "./gate-route.js";
import { APPROVAL_ENTRY } from "./approval-vars.js";

/** The tool's name (core never blocks it). */
export const STEP_TOOL = "workflow_step";

const ACTIONS = ["next", "loop", "cancel", "status"] as const;
type Action = (typeof ACTIONS)[number];

/** The parameters as plain JSON Schema: both hosts validate it, and no schema library is loaded at run time. */
export const STEP_PARAMETERS = {
  type: "object",
  properties: {
    action: {
      type: "string",
      enum: [...ACTIONS],
      description: "'next' when the current phase is done, 'loop' to restart the current scope, 'cancel' to abort (call twice to confirm), 'status' to see where the workflow is",
    },
    summary: { type: "string", description: "What was done in the phase you are leaving (kept in the workflow's history)" },
  },
  required: ["action"],
  additionalProperties: false,
} as const;

function text(t: string, details: Record<string, unknown> = {}): PiToolResult {
  return { content: [{ type: "text", text: t }], details };
}

/** Builds the tool definition. */
export function createStepTool(rt: Runtime, cont: Continuation): PiToolDefinition {
  return {
    name: STEP_TOOL,
    label: "Workflow Step",
    description: "Move the active workflow: 'next' when the current phase is done, 'loop' to restart the current scope, 'cancel' (twice) to abort, 'status' to see the current phase and its instructions.",
    promptSnippet: "Advance the active workflow to its next phase",
    promptGuidelines: [
      "Call workflow_step with action='next' when the current workflow phase is done; its result tells you the next phase.",
      "Call workflow_step with action='status' to see the current phase and its instructions.",
    ],
    parameters: STEP_PARAMETERS,
    async execute(_id, params: { action?: unknown; summary?: unknown }, _signal, _onUpdate, ctx) {
      cont.cancel(ctx.ui);
      const action = params?.action;
      if (typeof action !== "string" || !(ACTIONS as readonly string[]).includes(action)) {
        throw new Error(`[phasekit] workflow_step: action must be one of ${ACTIONS.join(", ")}, got ${JSON.stringify(action)}`);
      }
      const summary = typeof params.summary === "string" && params.summary.trim() !== "" ? params.summary.trim() : undefined;
      const honoured = await honourControl(rt, cont, ctx);
      if (honoured === "stopped") return text(`The user stopped the workflow from outside this session; it is cancelled. Stop working on it.`, { status: "cancelled" });
      if (honoured === "paused") return text(`The user paused the workflow from outside this session. Stop and wait for the user; do not call workflow_step until they resume it.`, { status: "paused" });
      if (honoured === "lost") return text(lostPauseText("step"), { status: rt.state?.status });
      return runAction(rt, action as Action, summary, ctx);
    },
    renderCall: (args, theme) => stepCallComponent(args, theme),
    renderResult: (result, options, theme) => stepResultComponent(result, options, theme),
  };
}

async function runAction(rt: Runtime, action: Action, summary: string | undefined, ctx: PiContext): Promise<PiToolResult> {
  const s = rt.state;
  if (s === null || s.status !== "running") {
    if (action === "status") return text("No active workflow. The user starts one with /workflow <name> <task>.", { active: false });
    throw new Error(`[phasekit] no running workflow to ${action}${s ? ` (the last one is ${s.status})` : ""}. The user starts one with /workflow <name> <task>.`);
  }
  if (action === "status") {
    if (s.cancelPending) rt.state = { ...s, cancelPending: false }; // any other action disarms a pending cancel
    return text(statusText(rt, rt.state as WorkflowState, ctx), { active: true, taskId: s.taskId });
  }
  if (rt.drivenElsewhere === s.taskId) {
    throw new Error(`[phasekit] run ${s.taskId} is driven by another session right now; this one may not move it. Tell the user.`);
  }
  // The phase's gates (verify commands, approval) decide whether it may be left (gates.ts).
  const gate: GateCheck = action === "next" ? await checkGates(rt, ctx) : {};
  if (gate.refused !== undefined) throw new Error(`[phasekit] next refused: ${gate.refused}`);
  const before = active(s, rt.registry);
  const kind = action === "next" ? "advance" : action;
  // A gate's "no" the definition routes: core's `route` moves the run back (or refuses at the loop limit).
  const r = gate.route !== undefined ? routeRun(gate.route, s, rt.registry, rt.now()) : move(kind, s, rt.registry, rt.now());
  if (!r.ok) {
    if (r.state !== null) rt.state = r.state;
    if (gate.route !== undefined) {
      await gate.done();
      throw new Error(`[phasekit] next refused: ${routeRefusedText(gate.route, gate.reason, r.error)}`);
    }
    throw new Error(`[phasekit] ${action} refused: ${r.error.message}`);
  }
  if (summary !== undefined && before !== null && action !== "cancel") {
    rt.pi.appendEntry(SUMMARY_ENTRY, { taskId: s.taskId, phaseName: before.phase.name, summary, at: rt.now() });
  }
  if (r.happened.type === "cancel-armed") {
    rt.state = r.state; // an armed cancel lives in memory only: a crash never leaves it half-confirmed
    return text(`⚠️ Confirm cancellation of "${s.taskDescription}": call workflow_step with action='cancel' again. Any other action keeps the workflow.`, { cancelPending: true });
  }
  // The approved payload is the next phases' `{approval}` (approval-vars.ts); written before the move it allowed.
  if (gate.route === undefined && gate.approval !== undefined) rt.pi.appendEntry(APPROVAL_ENTRY, { taskId: s.taskId, phaseId: before?.phase.id ?? "", data: gate.approval.data });
  const warning = await rt.commit(r.state, ctx);
  // An approval (or a rejection) is consumed only once the move it allowed is on disk.
  await (gate.route !== undefined ? gate.done() : gate.passed?.());
  const extra = warning === undefined ? "" : `\n\n(${warning})`;
  // Routed back: what the gate said (the failing output, the rejection) comes right after the result line.
  const why = gate.route !== undefined ? `\n\n${gate.reason}` : "";
  const from = before === null ? "?" : before.phase.name;
  switch (r.happened.type) {
    case "completed":
      return text(`${stepResultLine(r.happened, from, null, null, before?.definition.name ?? s.workflowKey)}${extra}`, { from, to: null, status: "completed" });
    case "cancelled":
      return text(`Workflow cancelled: "${s.taskDescription}". Stop working on it.${extra}`, { status: "cancelled" });
    default: {
      const now = active(r.state, rt.registry);
      if (now === null) return text(`✓ ${from} → ?${extra}`, {});
      // Core's words (present/step-result.ts): never "DONE" before the run is; the last phase says what to do.
      const first = stepResultLine(r.happened, from, { workflowKey: now.scopeKey, phaseId: now.phase.id, phaseName: now.phase.name, emoji: now.phase.emoji, depth: now.breadcrumb.length }, now.nextPhase, now.definition.name);
      const after = now.nextPhase === null ? null : now.nextPhase.phaseName;
      // pi 1.5.x puts the new phase's context into the run at the turn boundary (turn_end); 0.73.1 cannot, so
      // there the result itself carries it.
      const context = rt.boundaryTurns ? "The new phase's context follows as a workflow message." : `You are now in a new phase. Its context:\n\n${contextPrompt(now, ctx.sessionManager.getBranch())}`;
      // The first line is what the renderer shows collapsed: previous → current (then next).
      return text(`${first}${why}\n\n${context}${extra}`, { from, to: now.phase.name, next: after, lastPhase: now.nextPhase === null });
    }
  }
}

function statusText(rt: Runtime, s: WorkflowState, ctx: PiContext): string {
  const a = active(s, rt.registry);
  if (a === null) return `Workflow ${s.workflowKey} (task ${s.taskId}) does not match the loaded definitions; /cancel-workflow ends it.`;
  const lines = [contextPrompt(a, ctx.sessionManager.getBranch())];
  const history = summariesOf(ctx.sessionManager.getBranch(), s.taskId);
  if (history.length > 0) lines.push(["Summaries so far:", ...history.map((h) => `- ${h.phaseName}: ${h.summary}`)].join("\n"));
  return lines.join("\n\n");
}
