/**
 * The latest budget entry of a run's history, read the way `phasekit show` reads it (the run log's reader: no lock,
 * nothing written), with pi's counts beside the total. For tests of a run another process holds: its entry is
 * written after the turn, so `waitBudget` polls until `ready` accepts it.
 */
import { latestBudgetEntry } from "../../../src/run/budget.js";
import { readRunLog } from "../../../src/store/run-log/reader.js";

/** What the entry holds: the running total and, from the pi extension, its phase and progress counts. */
export interface BudgetRecord {
  turns: number;
  toolCalls: number;
  tokens: number;
  cost: number;
  pi?: { phaseUsed: { turns: number; toolCalls: number }; idleTurns: number; pausedFor?: string; raised?: { workflow?: Record<string, number>; phase?: Record<string, number> } };
}

/** The output of the entry that holds the run's total (`latestBudgetEntry`, the rule every reader follows), or null. */
export async function latestBudgetRecord(runDir: string): Promise<BudgetRecord | null> {
  const view = await readRunLog(runDir).catch(() => null);
  if (view === null) return null;
  try {
    const best = latestBudgetEntry(view.entries(), (e) => e.key);
    const text = best === null ? undefined : await view.outputText(best.item);
    return text === undefined ? null : (JSON.parse(text) as BudgetRecord);
  } finally {
    view.close();
  }
}

/** The latest budget entry once `ready` accepts it, or the last one read after 20 s. */
export async function waitBudget(runDir: string, ready: (r: BudgetRecord) => boolean): Promise<BudgetRecord | null> {
  const end = Date.now() + 20_000;
  for (;;) {
    const r = await latestBudgetRecord(runDir);
    if ((r !== null && ready(r)) || Date.now() > end) return r;
    await new Promise((res) => setTimeout(res, 100));
  }
}
