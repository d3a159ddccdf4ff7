/**
 * `ctx.budget`: what a `runWorkflow` body has spent (turns, tool calls, tokens, cost it reports; wall time since
 * the run first started) against the limits it runs under, judged by core (`judgeBudget`, the rule
 * `judgeControls` applies in pi). Every spend is an entry of the run's history holding the running total,
 * so a resumed body that replays its spends in order sees the totals it had, and goes on counting from them.
 * Wall time counts from the run's creation (workflow.json's createdAt), across resumes, pauses included.
 * The run's total, as every reader shows it, is that of its current history (`latestBudgetEntry`).
 */
import { BUDGET_KEYS, BudgetsSchema, judgeBudget, NO_USAGE, workflowError, type BudgetKey, type Budgets, type BudgetUsage } from "@phasekit/core";
import { z } from "zod";
import { budgetEntryIndex, budgetKey } from "../engine/reserved-keys.js";
import { schemaIssue } from "../engine/record-issue.js";
import type { CheckpointStore } from "../engine/checkpoint-port.js";
import type { PlanStore } from "../store/plan-store-port.js";

/** What one spend adds (wall time is measured, not reported). */
export type BudgetSpend = Partial<Omit<BudgetUsage, "wallTimeMs">>;

/** The body's budget: what is used and left, and a spend that records and judges. */
export interface RunBudget {
  /** The limits in force (none: `{ onExhausted: "pause" }`). */
  readonly limits: Budgets;
  /** What has been spent so far, wall time included. */
  used(): BudgetUsage;
  /** What is left of each limited quantity. */
  left(): Partial<Record<BudgetKey, number>>;
  /**
   * Records `spend` in the run's history, then judges: an exhausted budget pauses the run (RUN_PAUSED with the
   * reason; `onExhausted: "ask"` pauses too, for a person to resume with a raised budget) or fails it
   * (BUDGET_EXHAUSTED). Wall time is judged on every spend and by `check()`.
   */
  spend(spend: BudgetSpend): Promise<void>;
  /** Judges without spending (e.g. before an expensive step). */
  check(): void;
}

const n = z.number().min(0).refine(Number.isFinite, "must be finite");
const SpendSchema = z.strictObject({ turns: n.optional(), toolCalls: n.optional(), tokens: n.optional(), cost: n.optional() });
const TotalSchema = z.object({ turns: n, toolCalls: n, tokens: n, cost: n });

/** `value` read through `schema`, or INVALID_OPTIONS naming the argument `name` and the field (never zod's own throw). */
function counts<T>(schema: z.ZodType<T>, value: unknown, name: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw workflowError("run", "INVALID_OPTIONS", `${schemaIssue(parsed.error, value, name).text}.`, { field: name, hint: "pass { turns?, toolCalls?, tokens?, cost? } as numbers ≥ 0" });
}

/** Parses budget limits given to runWorkflow (core's schema, one home); INVALID_OPTIONS names the field. */
export function parseBudgets(raw: unknown): Budgets {
  const parsed = BudgetsSchema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  const { field, text } = schemaIssue(parsed.error, raw ?? {}, "budgets");
  throw workflowError("run", "INVALID_OPTIONS", `${text}.`, { field, hint: "see docs/gates.md: turns, toolCalls, wallTimeMs, tokens, cost (numbers ≥ 0), onExhausted" });
}

/** The budget of one body invocation over the run's history. */
export function createRunBudget(limits: Budgets, checkpoints: CheckpointStore, now: () => number, startedAt: number, scope: string): RunBudget {
  let total = { turns: 0, toolCalls: 0, tokens: 0, cost: 0 };
  let spends = 0;
  const used = (): BudgetUsage => ({ ...NO_USAGE, ...total, wallTimeMs: Math.max(0, now() - startedAt) });
  const judge = (): void => {
    const u = used();
    // Core's rule and words (judgeBudget), the same as the pi extension's.
    const j = judgeBudget(limits, u, scope);
    if (!j.ok || !j.verdict.exhausted) return;
    const { key, reason } = j.verdict;
    if (limits.onExhausted === "fail") throw workflowError("run", "BUDGET_EXHAUSTED", `${reason}.`, { field: key, value: u[key], reason, hint: "raise the budget and start a new run" });
    throw workflowError("run", "RUN_PAUSED", `${reason}: the run is paused.`, { reason, field: key, hint: "resume it with a raised budget (runWorkflow({ budgets }))" });
  };
  const left = (): Partial<Record<BudgetKey, number>> => {
    const u = used();
    return Object.fromEntries(BUDGET_KEYS.filter((k) => limits[k] !== undefined).map((k) => [k, Math.max(0, (limits[k] as number) - u[k])]));
  };
  return {
    limits,
    used,
    left,
    check: judge,
    async spend(spend) {
      const added = counts(SpendSchema, spend, "spend");
      spends += 1;
      const next = { ...total };
      for (const k of ["turns", "toolCalls", "tokens", "cost"] as const) next[k] += added[k] ?? 0;
      // The entry holds the running total: a replay gets the total the first run had at this point. It is keyed
      // by the spend and the total it adds to (as a dispatch by its event and state), so an entry after one that
      // spent otherwise (a rerun, a step run again) adds again, never handing back a total the replay left.
      const r = await checkpoints.step(budgetKey(spends), { spend: added, to: total }, () => next);
      const recorded = TotalSchema.safeParse(r.output);
      total = recorded.success ? recorded.data : next;
      judge();
    },
  };
}

/**
 * The budget entry that holds a run's running total: among `items` (step records, or a run log's entries, through
 * `keyOf`), the completed one of the highest occurrence that no rerun mark supersedes. Every reader of the total
 * picks it here, so `phasekit show`, the inspector, `phasekit watch` and the pi extension agree.
 *
 * The total is the spend of the run's current history: what its body's `ctx.budget.used()` reached, what the
 * limits judge. A rerun mark names the budget entries after its step (engine/reuse-decision.ts): those the rerun's
 * body spends again are recorded anew under a later lease (no longer superseded); those it no longer reaches stay
 * superseded, and are skipped here, whatever their n. Not "the entry recorded last": a replayed spend is reused and
 * writes nothing, so the entry recorded last can be a superseded one of a body that spent more. What a superseded
 * spend cost was spent all the same: it stays in the history as evidence (`superseded: true`), outside the total.
 * Superseding is judged by leases, so a compaction keeps the answer; a fork copies no superseded entry.
 */
export function latestBudgetEntry<T extends { status: string; superseded?: boolean | undefined }>(items: Iterable<T>, keyOf: (item: T) => string): { n: number; item: T } | null {
  let best: { n: number; item: T } | null = null;
  for (const item of items) {
    const n = budgetEntryIndex(keyOf(item));
    if (n !== undefined && item.status === "completed" && item.superseded !== true && (best === null || n > best.n)) best = { n, item };
  }
  return best;
}

/**
 * A running total of the budget entries in a run's history, and the occurrence of the entry that holds it; `extra`
 * is what else the entry's writer kept beside the total (the pi extension: its phase and progress counts), `{}`
 * for entries that hold the total only.
 */
export interface RecordedTotal {
  readonly n: number;
  readonly total: Omit<BudgetUsage, "wallTimeMs">;
  readonly extra: Readonly<Record<string, unknown>>;
}

/**
 * The latest budget total in run `slug`'s history (`latestBudgetEntry`'s entry, its output read back through the
 * store), or null: none, or a store that cannot read outputs back. `store` may hold the run's lock or not: every
 * store's checkpoints hold phasekit's own entries either way. Read by the pi extension when a run is resumed
 * in another session, so the count goes on from where it was.
 */
export async function latestBudgetTotal(store: PlanStore, slug: string, now: () => Date): Promise<RecordedTotal | null> {
  if (store.readStepOutput === undefined) return null;
  const best = latestBudgetEntry(await (await store.checkpoints(slug, { now })).records(), (r) => r.stepId);
  if (best === null) return null;
  const out = await store.readStepOutput(slug, best.item);
  if (!out.ok) return null;
  const value = JSON.parse(out.text) as unknown;
  const total = TotalSchema.safeParse(value);
  if (!total.success) return null;
  const { turns: _t, toolCalls: _c, tokens: _k, cost: _m, ...extra } = value as Record<string, unknown>;
  return { n: best.n, total: total.data, extra };
}

/**
 * Records `total` as budget entry `n` of the run's history (through `checkpoints`, which must hold the run's lock),
 * the key `ctx.budget.spend` writes: its input is `spend` (alone: pi never replays), its output the running total and
 * beside it `extra` (keys other than the total's; a reader of the total only, such as `phasekit show`, ignores them).
 * False when entry `n` was there already with the same spend: it is kept (a step is reused), nothing was recorded.
 */
export async function recordBudgetTotal(checkpoints: CheckpointStore, n: number, spend: BudgetSpend, total: Omit<BudgetUsage, "wallTimeMs">, extra: Readonly<Record<string, unknown>> = {}): Promise<boolean> {
  const added = counts(SpendSchema, spend, "spend");
  const output = { ...extra, ...counts(TotalSchema, total, "total") };
  const r = await checkpoints.step(budgetKey(n), added, () => output);
  return !r.reused;
}
