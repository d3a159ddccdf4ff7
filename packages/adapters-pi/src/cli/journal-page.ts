/**
 * The journal part of the inspector's run page, each entry with its sentence: the whole journal when the page
 * first opens the run, then (each refresh a change on the event stream triggers) only the entries past the last
 * one the page holds, so a live page does not fetch and render every generation's document again at each change.
 */
import type { JournalEntry } from "../store/journal.js";
import type { RunLocation } from "../run/target.js";
import { journalSentences } from "./journal-text.js";
import { runJournal, type Roots } from "./run-view.js";

/** What the page holds of the journal already. */
export interface JournalSince {
  /** The seq of the last entry the page holds: only the entries past it are sent. */
  after: number;
  /** The seq of the last state entry the page holds (0: none), which the first new state is told against. */
  state: number;
}

/** A journal entry as the page shows it. */
export type ShownEntry = JournalEntry & { text: string };

/**
 * The entries of the run at `location` past `since.after` (all without `since`), with their sentences. The read
 * starts at the page's last state entry, so a new state is told against it; the entries the page holds are not
 * sent again.
 */
export async function journalPage(roots: Roots, location: RunLocation, since?: JournalSince, read?: (after?: number) => Promise<JournalEntry[]>): Promise<ShownEntry[]> {
  const from = since === undefined ? undefined : since.state > 0 ? Math.min(since.after, since.state - 1) : since.after;
  // `read`: the journal of a history the caller has open already (the run page reads it once for every part).
  const entries = await (read ?? ((after) => runJournal(location, roots, after)))(from);
  const texts = journalSentences(entries);
  const shown = entries.map((e, i) => ({ ...e, text: texts[i] ?? e.event }));
  return since === undefined ? shown : shown.filter((e) => e.seq > since.after);
}
