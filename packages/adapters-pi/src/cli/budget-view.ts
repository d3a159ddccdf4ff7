/**
 * A run's budgets as `phasekit show` and the inspector show them: what the run spent (`ctx.budget` spends are
 * entries of its history holding the running total; wall time since the run was created) against the limits its
 * definitions declare (the workflow's and the current phase's), judged by core (`judgeControls`). A pi run's
 * totals are the same entries (pi/durable-budget.ts), written at its turn ends.
 */
import { judgeControls, migrateState, NO_USAGE, resolveActive, type BudgetKey, type Budgets, type BudgetUsage, type WorkflowRegistry } from "@phasekit/core";
import { latestBudgetEntry, latestBudgetTotal } from "../run/budget.js";
import { readRunLog, type RunLogView } from "../store/run-log/reader.js";
import type { PlanStore } from "../store/plan-store-port.js";

/** The budget part of `phasekit.show/1` (null when the run declares no limit and spent nothing). */
export interface BudgetView {
  /** What `ctx.budget` or the pi extension recorded (null: nothing in the run's history yet), wall time included. */
  used: BudgetUsage | null;
  /** The limits the run's definitions declare now, for the workflow and the current phase. */
  limits: { workflow: Budgets | null; phase: Budgets | null };
  /** What is left of the workflow's limits given `used` (null when nothing was recorded). */
  left: Partial<Record<BudgetKey, number>> | null;
  /** Core's reason when a workflow budget is used up. */
  exhausted: string | null;
}

/** What a run has spent (its latest recorded running total, wall time aside) and when that total was recorded. */
export interface BudgetSpent {
  used: Omit<BudgetUsage, "wallTimeMs">;
  at: string;
}

/** The latest running total of the budget spends in the run log of `runDir`, if any. */
export async function budgetSpent(runDir: string): Promise<BudgetSpent | null> {
  const view = await readRunLog(runDir).catch(() => null);
  if (view === null) return null;
  try {
    return await budgetSpentIn(view);
  } finally {
    view.close();
  }
}

/** The same, in a run log already open (the inspector's run page reads it with the steps: one opening). */
export async function budgetSpentIn(view: RunLogView): Promise<BudgetSpent | null> {
  // Only the latest entry's output is read (each better candidate's was, one read per entry in order).
  const best = latestBudgetEntry(view.entries(), (e) => e.key);
  const text = best === null ? undefined : await view.outputText(best.item);
  if (best === null || text === undefined) return null;
  const t = JSON.parse(text) as Partial<Record<"turns" | "toolCalls" | "tokens" | "cost", number>>;
  return { used: { turns: t.turns ?? 0, toolCalls: t.toolCalls ?? 0, tokens: t.tokens ?? 0, cost: t.cost ?? 0 }, at: new Date(best.item.at ?? Date.now()).toISOString() };
}

/**
 * The budgets of the run in plan folder `runDir`, or of run `slug` in a store named by URL (its history read
 * through the store: the label the store gives as its runDir is no folder), or from what it spent read already
 * (`budgetSpentIn`), created at `createdAt`, carrying
 * `rawState`, with `registry`'s definitions.
 */
export async function budgetView(run: string | { store: PlanStore; slug: string } | { spent: BudgetSpent | null }, createdAt: string | undefined, rawState: unknown, registry: WorkflowRegistry | null, nowMs: number): Promise<BudgetView | null> {
  const s =
    typeof run === "string" ? ((await budgetSpent(run))?.used ?? null)
    : "spent" in run ? (run.spent?.used ?? null)
    : ((await latestBudgetTotal(run.store, run.slug, () => new Date(nowMs)).catch(() => null))?.total ?? null);
  const used = s === null ? null : { ...s, wallTimeMs: Math.max(0, nowMs - Date.parse(createdAt ?? "")) || 0 };
  const state = rawState === undefined ? null : migrateState(rawState);
  const resolved = registry !== null && state?.ok ? resolveActive(registry, state.state) : null;
  const active = resolved?.ok ? resolved.active : null;
  const limits = { workflow: (active?.definition.budgets as Budgets | undefined) ?? null, phase: (active?.phase.budgets as Budgets | undefined) ?? null };
  if (used === null && limits.workflow === null && limits.phase === null) return null;
  const j = active === null || used === null ? null : judgeControls(active, { workflowUsed: used, phaseUsed: NO_USAGE });
  const verdict = j?.ok ? j.judgement.budget.workflow : null;
  return { used, limits, left: verdict?.left ?? null, exhausted: verdict?.exhausted ? verdict.reason : null };
}

/** The budget line of `show`'s text. */
export function budgetLine(b: BudgetView): string {
  const parts: string[] = [];
  if (b.used !== null) parts.push(`used ${b.used.turns} turns, ${b.used.toolCalls} tool calls, ${b.used.tokens} tokens, cost ${b.used.cost}`);
  else parts.push("used: nothing recorded yet");
  const lim = (x: Budgets | null) => (x === null ? null : Object.entries(x).filter(([k]) => k !== "onExhausted").map(([k, v]) => `${String(v)} ${k}`).join(", "));
  const w = lim(b.limits.workflow);
  const p = lim(b.limits.phase);
  if (w) parts.push(`workflow limits ${w}`);
  if (p) parts.push(`phase limits ${p}`);
  if (b.left !== null && Object.keys(b.left).length > 0) parts.push(`left ${Object.entries(b.left).map(([k, v]) => `${v} ${k}`).join(", ")}`);
  if (b.exhausted !== null) parts.push(b.exhausted);
  return parts.join("; ");
}
