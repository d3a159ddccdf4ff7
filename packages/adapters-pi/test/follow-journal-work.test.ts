/**
 * Following a run reads each journal entry once, not once per look: `watchRun`, `phasekit journal --follow` and
 * the inspector's live run page ask only for the entries past the last one they hold. The work is counted where
 * the history is rendered into journal entries, and by the history's openings; never timed.
 * The run is driven by a holder in this process, one generation per step of the test, moved on only after the
 * follower has shown the one before (events, not clocks).
 */
import { describe, expect, it, vi } from "vitest";
import { createFsPlanStore, type PlanStore } from "../src/store/plan-store.js";
import type { StoreLock } from "../src/store/plan-store-port.js";
import { watchRun } from "../src/cli/watch-run.js";
import { main } from "../src/cli/main.js";
import { startInspector } from "../src/cli/ui-server.js";
import { sampleMetadata } from "./helpers/metadata-fixtures.js";
import { useTempRepos } from "./helpers/temp-repos.js";

// What followers have rendered: every journal entry (and every state's whole document among them) the run's
// history is rendered into, whichever way it is read (the store's readJournal, or a page's one opening), and
// every opening of a history.
const reads = vi.hoisted(() => ({ journalCalls: 0, entries: 0, states: 0, openings: 0 }));
vi.mock(import("../src/store/journal-view.js"), async (original) => {
  const m = await original();
  return {
    ...m,
    renderJournal: (...a: Parameters<typeof m.renderJournal>) => {
      const out = m.renderJournal(...a);
      reads.journalCalls++;
      reads.entries += out.length;
      reads.states += out.filter((e) => e.event === "metadata").length;
      return out;
    },
  };
});
vi.mock(import("../src/store/run-log/reader.js"), async (original) => {
  const m = await original();
  return { ...m, readRunLog: (...a: Parameters<typeof m.readRunLog>) => (reads.openings++, m.readRunLog(...a)) };
});

const repo = useTempRepos("pk-follow-work-");
const ROUNDS = 40;

async function journalOf(repoRoot: string, slug: string) {
  const store = createFsPlanStore({ repoRoot });
  const r = await store.readJournal(slug);
  await store.close();
  if (!r.ok) throw r.error;
  return r.entries;
}

function reset(): void {
  reads.journalCalls = 0;
  reads.entries = 0;
  reads.states = 0;
  reads.openings = 0;
}

/** A run held by this process: `next()` writes one generation and a `tick-<i>` event, `finish()` completes it. */
async function heldRun(repoRoot: string, slug: string): Promise<{ next(): Promise<void>; finish(): Promise<void>; store: PlanStore }> {
  const store = createFsPlanStore({ repoRoot });
  const l = await store.lock(slug, { owner: { tool: "driver" } });
  if (!l.ok) throw l.error;
  const lock: StoreLock = l.lock;
  const via = lock.store ?? store;
  let generation: number | null = null;
  let i = 0;
  const write = async (status: "running" | "completed") => {
    const w = await via.writeMetadata(slug, { ...sampleMetadata(slug, i, 2000), status }, generation);
    if (!w.ok) throw w.error;
    generation = w.metadata.generation;
  };
  await write("running");
  return {
    store,
    async next() {
      i++;
      await write("running");
      const e = await via.appendJournal(slug, { generation: generation ?? 0, at: new Date().toISOString(), event: `tick-${i}`, data: { i } });
      if (!e.ok) throw e.error;
    },
    async finish() {
      i++;
      await write("completed");
      await lock.release();
      await store.close();
    },
  };
}

describe("followers read each journal entry once", () => {
  it("watchRun: every generation is fetched once however many looks, and each look opens the history once (metadata, steps, budget, journal)", async () => {
    const repoRoot = repo();
    const run = await heldRun(repoRoot, "watched");
    await run.next();
    reset();
    let ticks = 0;
    let driverOpenings = 0;
    for await (const e of watchRun("watched", { repoRoot, intervalMs: 1 })) {
      if (e.type !== "event" || !e.event.startsWith("tick-")) continue;
      ticks++;
      // The driver's own reads are not the follower's.
      const before = reads.openings;
      if (ticks < ROUNDS) await run.next();
      else await run.finish();
      driverOpenings += reads.openings - before;
    }
    const looks = reads.journalCalls;
    const watched = { entries: reads.entries, openings: reads.openings - driverOpenings };
    expect(ticks).toBe(ROUNDS);
    expect(looks).toBeGreaterThanOrEqual(ROUNDS);
    // Every entry came through the port once: the ROUNDS + 2 generations and ROUNDS ticks, whatever the looks.
    const all = await journalOf(repoRoot, "watched");
    expect(all.filter((e) => e.event === "metadata")).toHaveLength(ROUNDS + 2);
    expect(watched.entries).toBe(all.length);
    // Per look, one opening of the history for the metadata, the steps, what was spent and the journal.
    expect(watched.openings / looks, `driver ${driverOpenings}`).toBeLessThanOrEqual(1);
  });

  it("phasekit journal --follow prints every entry once, told as the whole journal tells it, fetching each generation once", async () => {
    const repoRoot = repo();
    const run = await heldRun(repoRoot, "followed");
    await run.next();
    reset();
    let out = "";
    let ticks = 1;
    const pending: Promise<void>[] = [];
    const code = await main(["journal", "followed", "--follow", "--interval", "1", "--repo", repoRoot], {
      stdout: {
        write: (s: string) => {
          out += s;
          // The driver moves the run on once the follower printed the tick before (no clock).
          if (s.includes(`tick-${ticks}`)) pending.push(++ticks <= ROUNDS ? run.next() : run.finish());
        },
      },
      stderr: { write: () => undefined },
      stdin: Object.assign((async function* () {})(), { isTTY: false }),
      cwd: repoRoot,
      env: {},
      now: () => new Date(),
    });
    await Promise.all(pending);
    expect(code).toBe(0);
    const looks = reads.journalCalls;
    expect(looks).toBeGreaterThanOrEqual(ROUNDS);
    // ROUNDS + 2 generations (the first, one per tick, the completion), each fetched once.
    expect(reads.states).toBe(ROUNDS + 2);
    let whole = "";
    await main(["journal", "followed", "--repo", repoRoot], { stdout: { write: (s: string) => void (whole += s) }, stderr: { write: () => undefined }, stdin: Object.assign((async function* () {})(), { isTTY: false }), cwd: repoRoot, env: {}, now: () => new Date() });
    expect(out).toBe(whole);
    expect(out).toContain("running → completed");
  });

  it("the inspector's live page asks only for the entries past those it holds, each told as the whole journal tells it", async () => {
    const repoRoot = repo();
    const run = await heldRun(repoRoot, "paged");
    for (let k = 0; k < 5; k++) await run.next();
    const token = "t0ken";
    const inspector = await startInspector({ roots: { repoRoot }, defDirs: [], port: 0, token });
    try {
      const get = async (q: string) => (await fetch(`${new URL(inspector.url).origin}/api/runs/paged${q}`, { headers: { "x-phasekit-token": token } })).json() as Promise<{ journal: Array<{ seq: number; event: string; text: string }>; journalAfter: number }>;
      const held = (await get("")).journal;
      expect(held.filter((e) => e.event === "metadata")).toHaveLength(6);
      for (let k = 0; k < 3; k++) await run.next();
      const lastState = [...held].reverse().find((e) => e.event === "metadata")?.seq ?? 0;
      reset();
      const page = await get(`?journalAfter=${held.at(-1)?.seq}&journalState=${lastState}`);
      // Only the new generations, and the page's last state they are told against, came through the port.
      expect(page.journalAfter).toBe(held.at(-1)?.seq);
      expect(page.journal.map((e) => e.event)).toEqual(["metadata", "tick-6", "metadata", "tick-7", "metadata", "tick-8"]);
      expect(reads.states).toBe(3 + 1);
      const whole = (await get("")).journal;
      expect([...held, ...page.journal]).toEqual(whole);
      expect((await fetch(`${new URL(inspector.url).origin}/api/runs/paged?journalAfter=-1`, { headers: { "x-phasekit-token": token } })).status).toBe(400);
    } finally {
      await inspector.close();
      await run.finish();
    }
  });
});
