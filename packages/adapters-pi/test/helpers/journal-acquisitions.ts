/** Journal writes and reads the fs journal tests share: an acquisition's generation and event, a page of entries. */
import type { JournalEntry } from "../../src/store/journal.js";
import type { PlanStore } from "../../src/store/plan-store.js";
import { sampleMetadata } from "./metadata-fixtures.js";

const at = "2026-01-02T03:04:05.000Z";

/** The journal's entries past seq `after` (all of them without it), or the store's error thrown. */
export async function journalEntries(store: PlanStore, slug: string, after?: number): Promise<JournalEntry[]> {
  const r = await store.readJournal(slug, after === undefined ? undefined : { after });
  if (!r.ok) throw r.error;
  return r.entries;
}

/**
 * One acquisition `i` (from 0, one per call): the lock taken, metadata generation i + 1 and a journaled
 * `moved-<i>` event written, the lock released (runs fold as they grow). Gives the event's seq.
 */
export async function acquisition(store: PlanStore, slug: string, i: number): Promise<number> {
  const l = await store.lock(slug, { owner: { tool: `holder-${i}` } });
  if (!l.ok) throw l.error;
  const via = l.lock.store ?? store;
  const w = await via.writeMetadata(slug, sampleMetadata(slug, i, 3000), i === 0 ? null : i);
  if (!w.ok) throw w.error;
  const e = await via.appendJournal(slug, { generation: w.metadata.generation, at, event: `moved-${i}`, data: { i } });
  if (!e.ok) throw e.error;
  await l.lock.release();
  return e.entry.seq;
}
