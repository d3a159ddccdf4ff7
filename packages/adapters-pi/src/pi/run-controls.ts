/**
 * Budgets and no-progress detection for the run a pi session drives. The extension counts what only it can see
 * (agent turns, tool calls, the usage pi reports per assistant message, the same tool call repeated, turns that
 * changed nothing) and core judges the counts against the definitions (`judgeControls`). The counts are a
 * session entry (`workflow:controls`) written at every turn end and pause, so `pi -c` and a tree move keep
 * counting; the run's totals are also entries of its history (durable-budget.ts), with the current phase's counts
 * and the no-progress counts beside them, so a run resumed in another session goes on from all of them. Wall time
 * counts from the run's creation (its state's startedAt, pauses included) and a phase's from that phase's start,
 * whichever session counts. When a budget runs out or the run stalls, the run is paused (core's pause, committed like every
 * change) with a reason that names what ran out or what repeated; tools are refused until it is resumed. An
 * exhausted budget does what its definition says (budget-exhausted.ts: pause, fail or ask); a person raises a
 * budget when resuming (`/workflow-resume <id> turns=60`, kept in the counts entry, applied by core).
 */
import { judgeControls, NO_USAGE, type BudgetUsage } from "@phasekit/core";
import type { RaisedBudgets } from "./budget-args.js";
import { exhaustedAction, failRun } from "./budget-exhausted.js";
import { active, move } from "./core-bridge.js";
import type { BranchEntry, PiApi, PiContext } from "./host.js";
import type { Runtime } from "./runtime.js";
import type { PiRunCounts } from "./durable-budget.js";
import { canonicalJson } from "../io/canonical-json.js";

/** The session entry holding the counts of the run this session drives. */
export const CONTROLS_ENTRY = "workflow:controls";
/** The status-bar key of the budget line. */
export const BUDGET_STATUS_KEY = "workflow-budget";

/** What the extension counted for one run. */
export interface Counts {
  taskId: string;
  /** Which phase the phase counts belong to (the state's path; a new phase resets them). */
  phaseKey: string;
  workflowUsed: BudgetUsage;
  phaseUsed: BudgetUsage;
  workflowStartedAt: number;
  phaseStartedAt: number;
  same: { tool: string; args: string; count: number } | undefined;
  idleTurns: number;
  /** Why this extension paused the run, while it is paused for that reason. */
  pausedFor: string | undefined;
  /** Limits a person raised (phase limits for the current phase only). */
  raised?: RaisedBudgets | undefined;
}

// How a command reaches the counting hooks of its runtime (registered once per runtime by registerRunControls).
const raisers = new WeakMap<object, (taskId: string, raised: RaisedBudgets) => void>();

/** Raises the budgets of run `taskId` (what `/workflow-resume <id> turns=60` asks); saved with the counts. */
export function raiseBudgets(rt: Runtime, taskId: string, raised: RaisedBudgets): void {
  raisers.get(rt)?.(taskId, raised);
}

const FILE_TOOLS = new Set(["write", "edit"]);
const USAGE_KEYS = ["turns", "toolCalls", "tokens", "cost"] as const;

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

/** The newest counts of `taskId` on the branch, if any. */
export function countsOnBranch(branch: readonly BranchEntry[], taskId: string): Counts | undefined {
  for (let i = branch.length - 1; i >= 0; i--) {
    const e = branch[i] as { type?: string; customType?: string; data?: Counts } | undefined;
    if (e?.type === "custom" && e.customType === CONTROLS_ENTRY && e.data?.taskId === taskId) return e.data;
  }
  return undefined;
}

/** Registers the counting hooks; call after `registerHooks` (its tool rules answer first). */
export function registerRunControls(pi: PiApi, rt: Runtime): void {
  let counts: Counts | undefined;
  /** The counts of the current run, phase counts reset when the phase changed. */
  const current = (): Counts | undefined => {
    const s = rt.state;
    const key = phaseKeyOf(rt);
    if (s === null || key === undefined) return (counts = undefined);
    const now = rt.now();
    const stored = rt.durable.budgetTotal(s.taskId);
    // Counts grow: a history ahead of this session's counts was written by another session that drove the run
    // meanwhile (`pi -c` on a session whose run went on elsewhere), and is the newer count.
    const behind = counts !== undefined && stored !== undefined && USAGE_KEYS.some((k) => stored[k] > (counts as Counts).workflowUsed[k]);
    if (counts === undefined || counts.taskId !== s.taskId || behind) {
      // No counts in this session: the run goes on from what its history recorded (resumed from another session),
      // its phase and progress counts too while it is still in the phase they were counted in.
      const workflowUsed = stored === undefined ? NO_USAGE : { ...stored, wallTimeMs: 0 };
      const pi = rt.durable.budgetCounts(s.taskId);
      const here = pi !== undefined && pi.phaseKey === key ? pi : undefined;
      counts = {
        taskId: s.taskId,
        phaseKey: key,
        workflowUsed,
        phaseUsed: here === undefined ? NO_USAGE : { ...here.phaseUsed, wallTimeMs: 0 },
        workflowStartedAt: Math.min(s.startedAt, now),
        phaseStartedAt: here === undefined ? now : Math.min(here.phaseStartedAt, now),
        same: here?.same,
        idleTurns: here?.idleTurns ?? 0,
        pausedFor: here?.pausedFor,
        // A raise of the workflow's limits holds for the run; of the phase's, for the phase it was made in.
        raised: raisedFor(pi?.raised, here !== undefined),
      };
    } else if (counts.phaseKey !== key) {
      const { phase: _left, ...kept } = counts.raised ?? {};
      counts = { ...counts, phaseKey: key, phaseUsed: NO_USAGE, phaseStartedAt: now, same: undefined, idleTurns: 0, raised: kept.workflow === undefined ? undefined : kept };
    }
    // A run resumed by the user (from a pause of ours) starts its progress counts afresh.
    if (s.status === "running" && counts.pausedFor !== undefined) counts = { ...counts, pausedFor: undefined, same: undefined, idleTurns: 0 };
    return counts;
  };
  const save = (): void => {
    if (counts === undefined) return;
    pi.appendEntry(CONTROLS_ENTRY, counts);
    // The run's history keeps the totals too (for another session and for phasekit show); a failed write leaves
    // the session entry as the count.
    void rt.durable.recordBudget(counts.taskId, counts.workflowUsed, rt.now(), carried(counts)).catch(() => undefined);
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
    counts = s === null ? undefined : countsOnBranch(ctx.sessionManager.getBranch(), s.taskId);
  };
  pi.on("session_start", (_e, ctx) => rebuild(ctx));
  pi.on("session_tree", (_e, ctx) => rebuild(ctx));

  pi.on("tool_call", async (e, ctx) => {
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

/** What of `c` the run's history keeps for another session (the phase's counts and the progress counts). */
function carried(c: Counts): PiRunCounts {
  const { turns, toolCalls, tokens, cost } = c.phaseUsed;
  return { phaseKey: c.phaseKey, phaseUsed: { turns, toolCalls, tokens, cost }, phaseStartedAt: c.phaseStartedAt, same: c.same, idleTurns: c.idleTurns, pausedFor: c.pausedFor, raised: c.raised };
}

function raisedFor(raised: RaisedBudgets | undefined, samePhase: boolean): RaisedBudgets | undefined {
  const kept = samePhase ? raised : raised?.workflow === undefined ? undefined : { workflow: raised.workflow };
  return kept?.workflow === undefined && kept?.phase === undefined ? undefined : kept;
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
