/**
 * Approval from pi itself: `/workflow-approve` lets the person at the keyboard decide an approve gate, with pi's
 * dialogs where the host has them (select approve / reject, then input for the payload or the reason), or inline:
 * `/workflow-approve {"channel":"beta"}`, `/workflow-approve reject <reason>`. The payload is checked against the
 * gate's schema here (core's `validateApproval`) and again by the gate. The decision is filed through the run's
 * store as `phasekit approve` files one (the store's filing rule, `requestControl`), so it survives pi being killed
 * before `next` takes it. A session that only shows the run (another process drives it) files it the same way, for
 * that process to take at its `next`. Only a run with no store (no plan folder), or a store that refuses, keeps it
 * in this pi process, for the phase it was made in.
 */
import { validateApproval } from "@phasekit/core";
import { active } from "./core-bridge.js";
import type { ApprovalDecision } from "../store/control-signals.js";
import type { PiCommandContext } from "./host.js";
import type { Runtime } from "./runtime.js";

/** A decision made in pi for one phase of one run. */
export type UiDecision = { taskId: string; phaseId: string } & ({ decision: "approve"; data: unknown } | { decision: "reject"; reason: string });

const decisions = new WeakMap<Runtime, UiDecision>();

/** The decision made in pi for the current phase of run `taskId`, if any. */
export function uiDecision(rt: Runtime, taskId: string, phaseId: string): UiDecision | undefined {
  const d = decisions.get(rt);
  return d !== undefined && d.taskId === taskId && d.phaseId === phaseId ? d : undefined;
}

/** Forgets the decision once the move it allowed (or the route it caused) is on disk. */
export function forgetUiDecision(rt: Runtime, d: UiDecision): void {
  if (decisions.get(rt) === d) decisions.delete(rt);
}

/** `/workflow-approve [reject <reason> | <JSON>]`. */
export async function approveCommand(rt: Runtime, args: string, ctx: PiCommandContext): Promise<void> {
  const a = active(rt.state, rt.registry);
  const gate = a?.phase.gates?.approve;
  if (a === null || gate === undefined || a.state.status !== "running") return rt.tell(ctx, "[phasekit] no phase of a running workflow waits for an approval here.", "warning");
  const text = args.trim();
  let decision: "approve" | "reject" | undefined;
  let rest = "";
  if (text !== "") {
    const reject = /^reject\b/u.exec(text);
    decision = reject ? "reject" : "approve";
    rest = reject ? text.slice(reject[0].length).trim() : text;
  } else if (ctx.hasUI && ctx.ui.select !== undefined) {
    const choice = await ctx.ui.select(`${a.phase.name}: ${gate.prompt}`, ["Approve", "Reject"]);
    if (choice === undefined) return rt.tell(ctx, "No decision made.");
    decision = choice === "Approve" ? "approve" : "reject";
    const ask = decision === "reject" ? "Why? (the agent reads it)" : gate.schema === undefined ? undefined : "Payload (JSON)";
    if (ask !== undefined && ctx.ui.input !== undefined) rest = ((await ctx.ui.input(ask, decision === "reject" ? "" : JSON.stringify(exampleOf(gate.schema)))) ?? "").trim();
  } else {
    return rt.tell(ctx, `Usage: /workflow-approve <JSON payload> | /workflow-approve reject <reason> (phase ${a.phase.name}: ${gate.prompt})`, "warning");
  }
  const base = { taskId: a.state.taskId, phaseId: a.phase.id };
  if (decision === "reject") {
    const reason = rest === "" ? "rejected in pi" : rest;
    const filed = await fileDecision(rt, ctx, a.state.taskId, reason, { name: a.phase.id, decision: "reject" });
    if (filed === "kept") decisions.set(rt, { ...base, decision, reason });
    if (filed === "elsewhere") return rt.tell(ctx, elsewhereNote("Rejected", a.phase.name, a.state.taskId));
    rt.tell(ctx, `Rejected ${a.phase.name}.`);
    return void rt.pi.sendUserMessage(`The person rejected phase ${a.phase.name}${rest === "" ? "" : `: ${rest}`}. Call workflow_step next to go where the workflow sends the run.`);
  }
  let data: unknown = null;
  if (rest !== "") {
    try {
      data = JSON.parse(rest) as unknown;
    } catch {
      return rt.tell(ctx, `[phasekit] the payload is not JSON: ${rest.slice(0, 80)}`, "error");
    }
  }
  const valid = validateApproval(gate.schema, data);
  if (!valid.ok) return rt.tell(ctx, `[phasekit] ${valid.error.message}`, "error");
  const filed = await fileDecision(rt, ctx, a.state.taskId, "approved in pi", { name: a.phase.id, decision: "approve", data: valid.data });
  if (filed === "kept") decisions.set(rt, { ...base, decision: "approve", data: valid.data });
  if (filed === "elsewhere") return rt.tell(ctx, elsewhereNote("Approved", a.phase.name, a.state.taskId));
  rt.tell(ctx, `Approved ${a.phase.name}.`);
  rt.pi.sendUserMessage(`The person approved phase ${a.phase.name}. Call workflow_step next to go on.`);
}

/**
 * Files the decision in the store of run `taskId`: "filed" when this session holds the run; "elsewhere" when
 * another process drives it (this session only shows it: that process takes the request at its `next`, and this
 * session's agent cannot move the run); "kept" when there is no store here, or the store refused (the user is told
 * why; the decision is then held in this process).
 */
async function fileDecision(rt: Runtime, ctx: PiCommandContext, taskId: string, reason: string, approval: ApprovalDecision): Promise<"filed" | "elsewhere" | "kept"> {
  if (!rt.durable.enabled) return "kept";
  await rt.claiming; // who drives the run is known once this session's claim settled
  const watching = rt.drivenElsewhere === taskId;
  if (!watching && rt.durable.heldSlug() !== taskId) return "kept";
  const filed = await rt.durable.requestControl("approve", { reason, approval }, watching ? { cwd: ctx.cwd, slug: taskId } : undefined);
  if (filed.ok) return watching ? "elsewhere" : "filed";
  rt.tell(ctx, `${filed.message.replace(/ Until then the run is kept in this session only\.$/u, "")} The decision is held by this pi process until next takes it.`, "warning");
  return "kept";
}

/** What a session that only shows the run says once the decision is filed for the process that drives it. */
function elsewhereNote(done: string, phase: string, taskId: string): string {
  return `${done} ${phase}: filed in run ${taskId}'s store; the session that drives the run takes it at its next workflow_step next.`;
}

/** A placeholder payload for the input dialog: the schema's first enum values, else an empty object. */
function exampleOf(schema: Record<string, unknown> | undefined): unknown {
  const props = (schema?.["properties"] ?? {}) as Record<string, { enum?: unknown[] }>;
  return Object.fromEntries(Object.entries(props).flatMap(([k, p]) => (Array.isArray(p.enum) && p.enum.length > 0 ? [[k, p.enum[0]]] : [])));
}
