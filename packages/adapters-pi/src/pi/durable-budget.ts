/**
 * What a pi run has spent, kept in the run's history (durable-runs.ts holds the run): the same budget entries
 * `ctx.budget` writes (run/budget.ts is the rule: key, running total, read back). They are the one record of it
 * for a run with a history (run-controls.ts writes no session entry then): every session that drives the run,
 * continued, forked or new, counts from them, and `phasekit show` / the inspector show what it spent. Beside the
 * total, an entry keeps what only pi counts (`pi`: the current phase's counts, when that phase started, the same
 * tool call and idle turns so far, the limits a person raised), so the phase budget, the no-progress thresholds
 * and a raise go on there too.
 * Entries written before that (total only) read as before: no phase or progress counts.
 */
import { BUDGET_KEYS, type BudgetUsage } from "@phasekit/core";
import { z } from "zod";
import { latestBudgetTotal, recordBudgetTotal, type RecordedTotal } from "../run/budget.js";
import type { PlanStore } from "../store/plan-store.js";
import { canonicalJson } from "../io/canonical-json.js";

type Total = Omit<BudgetUsage, "wallTimeMs">;
const KEYS = ["turns", "toolCalls", "tokens", "cost"] as const;

const count = z.number().min(0).refine(Number.isFinite, "must be finite");
const PiCountsSchema = z.object({
  phaseKey: z.string(),
  phaseUsed: z.object({ turns: count, toolCalls: count, tokens: count, cost: count }),
  phaseStartedAt: count,
  same: z.object({ tool: z.string(), args: z.string(), count: z.number().int().min(1) }).optional(),
  idleTurns: z.number().int().min(0),
  pausedFor: z.string().optional(),
  /** Limits a person raised (`/workflow-resume <id> turns=60`): the workflow's, and the current phase's. */
  raised: z.object({ workflow: z.partialRecord(z.enum(BUDGET_KEYS), count).optional(), phase: z.partialRecord(z.enum(BUDGET_KEYS), count).optional() }).optional(),
});

/** What pi counted for the current phase of a run (run-controls.ts), kept with its budget total. */
export type PiRunCounts = z.infer<typeof PiCountsSchema>;

/** A recorded total, and pi's counts beside it when the entry holds them (readable ones only). */
export interface RecordedRun extends RecordedTotal {
  readonly pi: PiRunCounts | undefined;
}

/**
 * The budget record of a run this session holds: `hold` is this hold of it (a new one at every claim or resume:
 * the history may have moved on in between), `recorded` what its history holds now (null: no count yet).
 */
export interface HeldBudget {
  readonly hold: object;
  readonly recorded: RecordedRun | null;
}

/** The latest recorded total of run `slug` (through the store holding its lock), or null; never throws. */
export async function loadBudgetTotal(store: PlanStore, slug: string, now: number): Promise<RecordedRun | null> {
  const r = await latestBudgetTotal(store, slug, () => new Date(now)).catch(() => null);
  if (r === null) return null;
  // Counts that do not read (a hand-edited entry, a later shape) are left out: the phase counts start afresh.
  const pi = PiCountsSchema.safeParse(r.extra["pi"]);
  return { ...r, pi: pi.success ? pi.data : undefined };
}

/**
 * Records `used` (and pi's `counts`) after `last` when either differs (the next entry; what it adds is the
 * difference, none below zero); returns what is now recorded, or `last` (unchanged, or the write failed: the next
 * save records the difference).
 */
export async function saveBudgetTotal(store: PlanStore, slug: string, last: RecordedRun | null, used: BudgetUsage, now: number, counts?: PiRunCounts): Promise<RecordedRun | null> {
  const total: Total = { turns: used.turns, toolCalls: used.toolCalls, tokens: used.tokens, cost: used.cost };
  // As JSON holds it (no undefined members): compared and written the way it is read back.
  const pi = counts === undefined ? undefined : (JSON.parse(JSON.stringify(PiCountsSchema.parse(counts))) as PiRunCounts);
  const samePi = (pi === undefined && last?.pi === undefined) || (pi !== undefined && last?.pi !== undefined && canonicalJson(pi) === canonicalJson(last.pi));
  if (last !== null && KEYS.every((k) => last.total[k] === total[k]) && samePi) return last;
  const spend = Object.fromEntries(KEYS.map((k) => [k, Math.max(0, total[k] - (last?.total[k] ?? 0))]));
  const extra = pi === undefined ? {} : { pi };
  try {
    const checkpoints = await store.checkpoints(slug, { now: () => new Date(now) });
    // An entry already at n (the latest could not be read back when the run was taken, or the store cannot read
    // outputs back) is kept as it is: the save goes to the next number, so that it is recorded and not lost.
    for (let n = (last?.n ?? 0) + 1, tries = 0; tries < MAX_TAKEN; n++, tries++) {
      if (await recordBudgetTotal(checkpoints, n, spend, total, extra)) return { n, total, extra, pi };
    }
    return last;
  } catch {
    return last;
  }
}

// How many taken entry numbers a save steps over before giving up (the next save tries again from `last`).
const MAX_TAKEN = 1000;
