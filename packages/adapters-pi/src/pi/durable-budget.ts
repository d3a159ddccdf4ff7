/**
 * What a pi run has spent, kept in the run's history (durable-runs.ts holds the run): the same budget entries
 * `ctx.budget` writes (run/budget.ts is the rule: key, running total, read back), so a run resumed in another
 * session goes on counting from its total, and `phasekit show` / the inspector show what it spent.
 */
import type { BudgetUsage } from "@phasekit/core";
import { latestBudgetTotal, recordBudgetTotal, type RecordedTotal } from "../run/budget.js";
import type { PlanStore } from "../store/plan-store.js";

type Total = Omit<BudgetUsage, "wallTimeMs">;
const KEYS = ["turns", "toolCalls", "tokens", "cost"] as const;

/** The latest recorded total of run `slug` (through the store holding its lock), or null; never throws. */
export async function loadBudgetTotal(store: PlanStore, slug: string, now: number): Promise<RecordedTotal | null> {
  return latestBudgetTotal(store, slug, () => new Date(now)).catch(() => null);
}

/**
 * Records `used` after `last` when it differs (the next entry; what it adds is the difference, none below zero);
 * returns what is now recorded, or `last` (unchanged, or the write failed: the session entry still holds it).
 */
export async function saveBudgetTotal(store: PlanStore, slug: string, last: RecordedTotal | null, used: BudgetUsage, now: number): Promise<RecordedTotal | null> {
  const total: Total = { turns: used.turns, toolCalls: used.toolCalls, tokens: used.tokens, cost: used.cost };
  if (last !== null && KEYS.every((k) => last.total[k] === total[k])) return last;
  const spend = Object.fromEntries(KEYS.map((k) => [k, Math.max(0, total[k] - (last?.total[k] ?? 0))]));
  const n = (last?.n ?? 0) + 1;
  try {
    await recordBudgetTotal(await store.checkpoints(slug, { now: () => new Date(now) }), n, spend, total);
    return { n, total };
  } catch {
    return last;
  }
}
