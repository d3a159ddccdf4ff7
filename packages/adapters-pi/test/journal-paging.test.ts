/**
 * Paging the fs store's journal by position (`readJournal(slug, { after })`) over what only the fs store has: a
 * snapshot's archive of older generations, seq gaps (a commit intent is no entry), and an earlier version's
 * journal file read first. A page reads what lies past `after`: never the archive when the page starts after it,
 * and of the states before it only the chain the first new delta is built on.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { createFsPlanStore } from "../src/store/plan-store.js";
import type { JournalEntry } from "../src/store/journal.js";
import { MAX_CHAIN } from "../src/store/run-log/state-keeper.js";
import { acquisition, journalEntries } from "./helpers/journal-acquisitions.js";
import { sampleMetadata } from "./helpers/metadata-fixtures.js";
import { useTempRepos } from "./helpers/temp-repos.js";

// Counts the work of a read: every state value decoded, every time an archive is decoded.
const work = vi.hoisted(() => ({ states: 0, archives: 0 }));
vi.mock(import("../src/store/run-log/state-keeper.js"), async (original) => {
  const m = await original();
  return { ...m, readStateValue: (...a: Parameters<typeof m.readStateValue>) => (work.states++, m.readStateValue(...a)) };
});
vi.mock(import("../src/store/run-log/archive.js"), async (original) => {
  const m = await original();
  return { ...m, archivedRecords: (...a: Parameters<typeof m.archivedRecords>) => (a[0].archive?.decoded === undefined && a[0].archive !== undefined && work.archives++, m.archivedRecords(...a)) };
});

const repo = useTempRepos("pk-journal-paging-");
const at = "2026-01-02T03:04:05.000Z";

beforeEach(() => {
  work.states = 0;
  work.archives = 0;
});

describe("the fs journal paged by position", () => {
  it("past an archive of older generations and a seq gap, every `after` gives exactly the entries past it; a follower's page reads no archive and a bounded chain", async () => {
    const root = repo();
    const store = createFsPlanStore({ repoRoot: root });
    for (let i = 0; i < 70; i++) {
      await acquisition(store, "long", i);
      if (i === 1) {
        // A commit intent: a record of the history that is no journal entry (its seq is a gap).
        const l = await store.lock("long", { owner: { tool: "committer" } });
        if (!l.ok) throw l.error;
        await (await (l.lock.store ?? store).checkpoints("long", { now: () => new Date() })).recordCommitIntent({ id: "c1", message: "early", files: [] });
        await l.lock.release();
      }
    }
    const all = await journalEntries(store, "long");
    expect(all).toHaveLength(140);
    expect(work.archives).toBe(1);
    // The whole journal decodes every generation.
    expect(work.states).toBeGreaterThanOrEqual(70);
    const last = all.at(-1)?.seq ?? 0;
    for (let after = 0; after <= last + 1; after++) expect(await journalEntries(store, "long", after), `after ${after}`).toEqual(all.filter((e) => e.seq > after));

    // A follower: one more generation per look, each look asks past the last seq it saw.
    let seen = last;
    const got: JournalEntry[] = [];
    for (let i = 70; i < 100; i++) {
      await acquisition(store, "long", i);
      work.states = 0;
      work.archives = 0;
      const fresh = await journalEntries(store, "long", seen);
      expect(fresh.map((e) => `${e.event}@${e.generation}`)).toEqual([`metadata@${i + 1}`, `moved-${i}@${i + 1}`]);
      // Nothing before the page is rendered again: no archive, and of the states only the chain the new one
      // is built on (its full state and the deltas since), however many generations came before.
      expect(work.archives).toBe(0);
      expect(work.states).toBeLessThanOrEqual(MAX_CHAIN + 1);
      got.push(...fresh);
      seen = fresh.at(-1)?.seq ?? seen;
    }
    expect([...all, ...got]).toEqual(await journalEntries(store, "long"));
    await store.close();
  });

  it("a folder of an earlier version: its journal file's entries page with the history's after them", async () => {
    const root = repo();
    const store = createFsPlanStore({ repoRoot: root });
    await acquisition(store, "old", 0);
    await acquisition(store, "old", 1);
    const meta = (g: number) => ({ ...sampleMetadata("old", g - 1, 3000), generation: g, schemaVersion: 1 });
    const legacy = [
      { seq: 1, generation: 1, at, event: "metadata", data: meta(1) },
      { seq: 2, generation: 1, at, event: "step-reused", data: { stepId: "plan" } },
    ];
    writeFileSync(path.join(root, "ai_plan", "old", "journal.ndjson"), legacy.map((l) => `${JSON.stringify(l)}\n`).join(""));
    await acquisition(store, "old", 2);
    const all = await journalEntries(store, "old");
    expect(all.map((e) => `${e.seq}:${e.event}@${e.generation}`)).toEqual(["1:metadata@1", "2:step-reused@1", "4:moved-0@1", "5:metadata@2", "6:moved-1@2", "7:metadata@3", "8:moved-2@3"]);
    for (let after = 0; after <= 9; after++) expect(await journalEntries(store, "old", after), `after ${after}`).toEqual(all.filter((e) => e.seq > after));
    await store.close();
  });
});
