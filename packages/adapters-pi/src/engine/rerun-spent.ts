/**
 * Spent rerun marks. A rerun mark (reuse-decision.ts) asks for steps to run again at the run's next resume. A
 * run that then ends (completed, failed or cancelled) without reaching some of them will never carry out their
 * rerun: it is over. Its end records those marks as spent, one entry of the run's history (never a side file),
 * and retention and the views read "not pending" from it. A spent mark still supersedes: the reuse decision is
 * unchanged, so nothing the rerun asked to run again is ever reused, and a later re-entry that reaches the step
 * runs it. A mark written after the spend makes the step pending again.
 */
import { z } from "zod";
import { damagedRecord } from "./record-issue.js";
import { isSuperseded, type RerunMark, type StoredRerunEvent } from "./reuse-decision.js";

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

/** The flags a reader sets on the latest record of `key` (written under `epoch`): none, `superseded`, or both. */
export function rerunFlags(key: string, epoch: number, marks: readonly RerunMark[], spends: readonly SpentMarks[]): { superseded: true; rerunSpent?: true } | undefined {
  if (marks.length === 0 || !isSuperseded(key, epoch, marks)) return undefined;
  return isSpent(key, marks, spends) ? { superseded: true, rerunSpent: true } : { superseded: true };
}

/** The flags as a reader set them. */
export interface RerunFlagged {
  superseded?: boolean | undefined;
  rerunSpent?: boolean | undefined;
}

/** Whether a step's latest record waits for its rerun: superseded by a mark not spent yet (what a run's end spends, what keeps a run from retention). */
export function awaitsItsRerun(r: RerunFlagged): boolean {
  return r.superseded === true && r.rerunSpent !== true;
}

/** The keys a run's end spends: those whose latest record awaits its rerun. */
export function keysToSpend(records: Iterable<RerunFlagged & { stepId: string }>): string[] {
  const out: string[] = [];
  for (const r of records) if (awaitsItsRerun(r)) out.push(r.stepId);
  return out;
}

const spendData = z.object({ keys: z.array(z.string()) });

/** The spends among RERUN_SPENT_EVENT events, oldest first; one whose data is not one is damage, as a mark's is (`rerunMarksOf`). */
export function spentMarksOf(events: Iterable<StoredRerunEvent>): SpentMarks[] {
  const out: SpentMarks[] = [];
  for (const { epoch, data, file, place } of events) {
    const d = spendData.safeParse(data);
    if (!d.success) throw damagedRecord("a spend of rerun marks", data, file, place, d.error);
    out.push({ epoch, keys: d.data.keys });
  }
  return out;
}
