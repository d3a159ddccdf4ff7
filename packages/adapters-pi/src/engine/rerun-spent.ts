/**
 * Spent rerun marks. A rerun mark (reuse-decision.ts) asks for steps to run again at the run's next resume. A
 * run that then ends (completed, failed or cancelled) without reaching some of them will never carry out their
 * rerun: it is over. Its end records those marks as spent, one entry of the run's history (never a side file),
 * and retention and the views read "not pending" from it. A spent mark still supersedes: the reuse decision is
 * unchanged, so nothing the rerun asked to run again is ever reused, and a later re-entry that reaches the step
 * runs it. A mark written after the spend makes the step pending again.
 */
import type { RerunMark } from "./reuse-decision.js";

/** The event name of spent marks in a run's history (the fs run log; the entry port's entry is `t: "spent"`). */
export const RERUN_SPENT_EVENT = "rerun-spent";

/** A spend as the history keeps it: written under the lease of `epoch` (the run that ended), naming `keys`. */
export interface SpentMarks {
  epoch: number;
  keys: readonly string[];
}

/**
 * Whether the mark that supersedes `key` is spent: a spend written after the latest mark naming `key` names it.
 * The lease that ends a run is later than every mark it saw, and a mark has a lease of its own, so a mark written
 * after the run ended is always later than that run's spend.
 */
export function isSpent(key: string, marks: readonly RerunMark[], spends: readonly SpentMarks[]): boolean {
  let latest = -Infinity;
  for (const m of marks) if (m.epoch > latest && m.keys.includes(key)) latest = m.epoch;
  for (const s of spends) if (s.epoch > latest && s.keys.includes(key)) return true;
  return false;
}

/** The keys a run's end spends: those whose latest record is superseded by a mark not spent yet. */
export function keysToSpend(records: Iterable<{ stepId: string; superseded?: boolean | undefined; rerunSpent?: boolean | undefined }>): string[] {
  const out: string[] = [];
  for (const r of records) if (r.superseded === true && r.rerunSpent !== true) out.push(r.stepId);
  return out;
}

/** The spends among `(epoch, data)` pairs of RERUN_SPENT_EVENT events (malformed data spends nothing, as a malformed mark marks nothing). */
export function spentMarksOf(events: Iterable<{ epoch: number; data: unknown }>): SpentMarks[] {
  const out: SpentMarks[] = [];
  for (const { epoch, data } of events) {
    const keys = (data as { keys?: unknown } | null)?.keys;
    if (Array.isArray(keys)) out.push({ epoch, keys: keys.filter((k): k is string => typeof k === "string") });
  }
  return out;
}
