/**
 * Paging a run's journal by position (part of the PlanStore contract): `readJournal(slug, { after })` gives
 * exactly the entries past seq `after`, in order, the same whether read through the holder's store or another
 * store object, so a follower asks only for what is new. A position that is no whole number ≥ 0 is refused.
 */
import { expect, it } from "vitest";
import type { JournalEntry } from "../../src/store/journal.js";
import type { PlanStore } from "../../src/store/plan-store.js";
import type { HolderHarness } from "./holders-contract.js";
import { journalEntries } from "../helpers/journal-acquisitions.js";
import { sampleMetadata } from "../helpers/metadata-fixtures.js";

const at = "2026-01-02T03:04:05.000Z";

/** Registers the paging cases (inside runPlanStoreContract's describe). */
export function journalPagingCases(fresh: () => Promise<PlanStore>, harness: HolderHarness, track: (s: PlanStore) => PlanStore): void {
  it("pages the journal by seq: every `after` gives exactly the entries past it, through the holder and through a reader", async () => {
    const store = await fresh();
    const reader = track(await harness.reopen(store));
    const l = await store.lock("run-p", { owner: { tool: "pager" } });
    if (!l.ok) throw l.error;
    const holder = l.lock.store ?? store;
    let generation: number | null = null;
    let seen = 0;
    const pages: JournalEntry[][] = [];
    for (let i = 0; i < 6; i++) {
      const w = await holder.writeMetadata("run-p", sampleMetadata("run-p", i, 200), generation);
      if (!w.ok) throw w.error;
      generation = w.metadata.generation;
      if (i % 2 === 1) {
        const e = await holder.appendJournal("run-p", { generation, at, event: `moved-${i}`, data: { i } });
        if (!e.ok) throw e.error;
      }
      // A follower's look: only what is new since its last one.
      const page = await journalEntries(reader, "run-p", seen);
      pages.push(page);
      seen = page.at(-1)?.seq ?? seen;
    }
    const all = await journalEntries(reader, "run-p");
    expect(all.map((e) => e.event)).toEqual(["metadata", "metadata", "moved-1", "metadata", "metadata", "moved-3", "metadata", "metadata", "moved-5"]);
    expect(pages.flat()).toEqual(all);
    expect(pages.map((p) => p.length)).toEqual([1, 2, 1, 2, 1, 2]);
    const last = all.at(-1)?.seq ?? 0;
    for (let after = 0; after <= last + 2; after++) {
      const want = all.filter((e) => e.seq > after);
      expect(await journalEntries(reader, "run-p", after), `after ${after}`).toEqual(want);
      expect(await journalEntries(holder, "run-p", after), `after ${after}, holder`).toEqual(want);
    }
    // The newest page ends where the journal ends: nothing past it, and a run with no journal pages empty too.
    expect(await journalEntries(reader, "run-p", last)).toEqual([]);
    expect(await journalEntries(reader, "no-such-run", 3)).toEqual([]);
    await l.lock.release();
  });

  it("refuses a position that is no whole number ≥ 0 with INVALID_OPTIONS naming `after`", async () => {
    const store = await fresh();
    await store.writeMetadata("run-q", sampleMetadata("run-q"), null);
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, "2" as unknown as number]) {
      const r = await store.readJournal("run-q", { after: bad });
      expect(r.ok, String(bad)).toBe(false);
      if (!r.ok) expect([r.error.code, r.error.details?.field], String(bad)).toEqual(["INVALID_OPTIONS", "after"]);
    }
    const badSlug = await store.readJournal("../x", { after: 0 });
    expect(!badSlug.ok && badSlug.error.code).toBe("INVALID_SLUG");
  });
}
