/**
 * Budgets and no-progress detection for the run a pi session drives. The extension counts what only it can see
 * (agent turns, tool calls, the usage pi reports per assistant message, the same tool call repeated, turns that
 * changed nothing) and core judges the counts against the definitions (`judgeControls`). The counts have one
 * record (run-counts.ts), written at every turn end and pause: the budget entries of the run's history when this
 * session holds it, so a session continued (`pi -c`), forked or new goes on from what the run spent whatever its
 * branch says; a session entry for a run without one (`planRoot: false`, an unusable plan folder). Wall time
 * counts from the run's creation (its state's startedAt, pauses included) and a phase's from that phase's start,
 * whichever session counts. When a budget runs out or the run stalls, the run is paused (core's pause, committed
 * like every change) with a reason that names what ran out or what repeated; tools are refused until it is
 * resumed. An exhausted budget does what its definition says (budget-exhausted.ts: pause, fail or ask); a person
 * raises a budget when resuming (`/workflow-resume <id> turns=60`, kept with the counts, applied by core).
 */
import { judgeControls, NO_USAGE, type BudgetUsage } from "@phasekit/core";
import type { RaisedBudgets } from "./budget-args.js";
import { exhaustedAction, failRun } from "./budget-exhausted.js";
import { active, move } from "./core-bridge.js";
import type { PiApi, PiContext } from "./host.js";
import { carried, CONTROLS_ENTRY, countsOnBranch, fromHistory, type Counts } from "./run-counts.js";
import type { Runtime } from "./runtime.js";
import { canonicalJson } from "../io/canonical-json.js";

/** The status-bar key of the budget line. */
export const BUDGET_STATUS_KEY = "workflow-budget";

// How a command reaches the counting hooks of its runtime (registered once per runtime by registerRunControls).
const raisers = new WeakMap<object, (taskId: string, raised: RaisedBudgets) => void>();

/** Raises the budgets of run `taskId` (what `/workflow-resume <id> turns=60` asks); saved with the counts. */
export function raiseBudgets(rt: Runtime, taskId: string, raised: RaisedBudgets): void {
  raisers.get(rt)?.(taskId, raised);
}

const FILE_TOOLS = new Set(["write", "edit"]);

function phaseKeyOf(rt: Runtime): string | undefined {
  const s = rt.state;
  return s === null ? undefined : JSON.stringify([s.taskId, s.currentPath, s.loopCount]);
}

function add(u: BudgetUsage, d: Partial<BudgetUsage>): BudgetUsage {
  return { turns: u.turns + (d.turns ?? 0), toolCalls: u.toolCalls + (d.toolCalls ?? 0), tokens: u.tokens + (d.tokens ?? 0), cost: u.cost + (d.cost ?? 0), wallTimeMs: u.wallTimeMs };
}

/** Tokens and cost of one assistant message, as both hosts report them (`usage.totalTokens`, `usage.cost.total`). */
export function usageOf(message: unknown): { tokens: number; cost: number } {
  const u = (message as { usage?: { totalTokens?: unknown; input?: unknown; output?: unknown; cost?: { total?: unknown } } } | undefined)?.usage;
  const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);
  const tokens = num(u?.totalTokens) || num(u?.input) + num(u?.output);
  return { tokens, cost: num(u?.cost?.total) };
}

/** Registers the counting hooks; call after `registerHooks` (its tool rules answer first). */
export function registerRunControls(pi: PiApi, rt: Runtime): void {
  let counts: Counts | undefined;
  // The hold of the run `counts` were read under (its history is the record), or undefined: the session's entries are.
  let countedUnder: object | undefined;
  // The newest counts entry of the run on the branch, read at the last session change.
  let onBranch: Counts | undefined;
  /** The counts of the current run, from its record, phase counts reset when the phase changed. */
  const current = (): Counts | undefined => {
    const s = rt.state;
    const key = phaseKeyOf(rt);
    if (s === null || key === undefined) return (counts = undefined);
    const now = rt.now();
    const held = rt.durable.budget(s.taskId);
    if (counts === undefined || counts.taskId !== s.taskId || countedUnder !== held?.hold) {
      // Counted in the session so far (an older version's entry, or before the plan folder could be used): what the
      // history takes over when it holds no count yet, and the record while the run has no history.
      const session = counts?.taskId === s.taskId && countedUnder === undefined ? counts : onBranch?.taskId === s.taskId ? onBranch : undefined;
      const recorded = held?.recorded ?? null;
      counts = recorded !== null || session === undefined ? fromHistory(s, key, now, recorded) : session;
      countedUnder = held?.hold;
    }
    if (counts.phaseKey !== key) {
      const { phase: _left, ...kept } = counts.raised ?? {};
      counts = { ...counts, phaseKey: key, phaseUsed: NO_USAGE, phaseStartedAt: now, same: undefined, idleTurns: 0, raised: kept.workflow === undefined ? undefined : kept };
    }
    // A run resumed by the user (from a pause of ours) starts its progress counts afresh.
    if (s.status === "running" && counts.pausedFor !== undefined) counts = { ...counts, pausedFor: undefined, same: undefined, idleTurns: 0 };
    return counts;
  };
  const save = (): void => {
    if (counts === undefined) return;
    // One record: the run's history when this session holds it (a failed write leaves the difference to the next
    // save), else the session's entry.
    if (rt.durable.budget(counts.taskId) === undefined) pi.appendEntry(CONTROLS_ENTRY, counts);
    else void rt.durable.recordBudget(counts.taskId, counts.workflowUsed, rt.now(), carried(counts)).catch(() => undefined);
  };
  raisers.set(rt, (taskId, raised) => {
    const c = current();
    if (c === undefined || c.taskId !== taskId) return;
    const before = c.raised ?? {};
    counts = { ...c, raised: { workflow: { ...before.workflow, ...raised.workflow }, phase: { ...before.phase, ...raised.phase } } };
    save();
  });
  /** Judges the counts; pauses (or fails) the run and says why when a budget ran out or progress stalled. */
  const judge = async (ctx: PiContext): Promise<{ why: string; ended: "paused" | "failed" } | undefined> => {
    const c = current();
    const a = active(rt.state, rt.registry);
    if (c === undefined || a === null || a.state.status !== "running") return undefined;
    const now = rt.now();
    const j = judgeControls(a, {
      workflowUsed: { ...c.workflowUsed, wallTimeMs: now - c.workflowStartedAt },
      phaseUsed: { ...c.phaseUsed, wallTimeMs: now - c.phaseStartedAt },
      progress: { ...(c.same === undefined ? {} : { sameToolCall: c.same }), idleTurns: c.idleTurns },
      ...(c.raised === undefined ? {} : { raised: c.raised }),
    });
    if (!j.ok) return undefined;
    showBudget(ctx, j.judgement.budget.workflow.left, j.judgement.budget.phase.left);
    const exhausted = j.judgement.budget.exhausted;
    let why = exhausted?.exhausted ? exhausted.reason : j.judgement.progress.stalled ? j.judgement.progress.reason : undefined;
    if (why === undefined) return undefined;
    if (exhausted?.exhausted) {
      const act = await exhaustedAction(ctx, exhausted);
      if (act.kind === "raise") {
        const scope = exhausted === j.judgement.budget.workflow ? "workflow" : "phase";
        raisers.get(rt)?.(c.taskId, { [scope]: { [act.key]: act.to } });
        rt.tell(ctx, `[phasekit] ${exhausted.reason}: raised to ${act.to} ${act.key}; the run goes on.`);
        return undefined;
      }
      if (act.kind === "fail") {
        const failed = failRun(a.state, rt.registry, why, now);
        if (!failed.ok) return undefined;
        save();
        await rt.commit(failed.state, ctx);
        rt.tell(ctx, `[phasekit] run ${a.state.taskId} failed: ${why}.`, "error");
        return { why, ended: "failed" };
      }
      if (act.note !== undefined) why = `${why} (${act.note})`;
    }
    const paused = move("pause", a.state, rt.registry, now);
    if (!paused.ok) return undefined;
    counts = { ...c, pausedFor: why };
    save();
    await rt.commit(paused.state, ctx);
    rt.tell(ctx, `[phasekit] run ${a.state.taskId} paused: ${why}. /workflow-resume ${a.state.taskId} goes on (add e.g. turns=60 to raise a budget).`, "warning");
    return { why, ended: "paused" };
  };

  const rebuild = (ctx: PiContext): void => {
    const s = rt.state;
    onBranch = s === null ? undefined : countsOnBranch(ctx.sessionManager.getBranch(), s.taskId);
    // Counts read from the session's entries follow the branch; a held run's history is the record whatever the
    // branch says (a tree move or a fork spends nothing back), so those stay.
    if (countedUnder === undefined) counts = undefined;
  };
  pi.on("session_start", (_e, ctx) => rebuild(ctx));
  pi.on("session_tree", (_e, ctx) => rebuild(ctx));

  pi.on("tool_call", async (e, ctx) => {
    await rt.claiming; // whether the run's history is the record is known once the session's claim settled
    const c = current();
    if (c === undefined || rt.state === null) return undefined;
    if (rt.state.status === "paused" && c.pausedFor !== undefined) {
      return { block: true as const, reason: `The workflow is paused (${c.pausedFor}). Stop working and wait for the user to resume it.` };
    }
    if (rt.state.status !== "running") return undefined;
    const args = stableJson(e.input);
    const same = c.same !== undefined && c.same.tool === e.toolName && c.same.args === args ? { ...c.same, count: c.same.count + 1 } : { tool: e.toolName, args, count: 1 };
    counts = { ...c, same, workflowUsed: add(c.workflowUsed, { toolCalls: 1 }), phaseUsed: add(c.phaseUsed, { toolCalls: 1 }) };
    const judged = await judge(ctx);
    if (judged === undefined) return undefined;
    return { block: true as const, reason: judged.ended === "failed" ? `The workflow failed: ${judged.why}. Stop working on it and tell the user.` : `The workflow is paused: ${judged.why}. Stop and wait for the user.` };
  });

  pi.on("turn_end", async (e, ctx) => {
    await rt.claiming;
    const c = current();
    if (c === undefined || rt.state?.status !== "running") return undefined;
    const ev = e as unknown as { message?: unknown; toolResults?: ReadonlyArray<{ toolName?: string; isError?: boolean }> };
    const { tokens, cost } = usageOf(ev.message);
    const changed = (ev.toolResults ?? []).some((r) => FILE_TOOLS.has(r.toolName ?? "") && r.isError !== true);
    const d = { turns: 1, tokens, cost };
    counts = { ...c, workflowUsed: add(c.workflowUsed, d), phaseUsed: add(c.phaseUsed, d), idleTurns: changed ? 0 : c.idleTurns + 1 };
    await judge(ctx);
    save();
    return undefined;
  });
  // A phase completed is progress: the idle count starts again in the new phase (current() resets it).
}

function showBudget(ctx: PiContext, workflowLeft: Partial<Record<string, number>>, phaseLeft: Partial<Record<string, number>>): void {
  const parts = [...Object.entries(workflowLeft).map(([k, v]) => `${v} ${k}`), ...Object.entries(phaseLeft).map(([k, v]) => `${v} ${k} (phase)`)];
  try {
    ctx.ui.setStatus(BUDGET_STATUS_KEY, parts.length === 0 ? undefined : `budget left: ${parts.join(", ")}`);
    // The widget says the same under the editor, one quantity a line, for hosts that show widgets and not status.
    if (ctx.hasUI) ctx.ui.setWidget(BUDGET_STATUS_KEY, parts.length === 0 ? undefined : ["Budget left:", ...parts.map((p) => `  ${p}`)], { placement: "belowEditor" });
  } catch {
    // a stale ctx (session replaced): the next event shows it
  }
}

/** The arguments as canonical JSON (keys sorted: the same arguments in another key order are the same call). */
function stableJson(value: unknown): string {
  try {
    return canonicalJson(value ?? null);
  } catch {
    return String(value); // not plain JSON (a host oddity): compared as text
  }
}
