/**
 * A follower that ends on a status its holder has just written still shows what the holder journals right after
 * it: runWorkflow writes the paused state, then journals `paused`, then lets go. A paused run whose holder is
 * alive has more coming, so a follower goes on looking until the holder lets go, however long it takes; a look
 * judges the holder before it reads the status and the journal, so the look that finds it gone reads all it
 * wrote. The holder's line and its release are landed at a chosen holder check of the follower, not by a clock.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createFsPlanStore } from "../src/store/plan-store.js";
import { watchRun } from "../src/cli/watch-run.js";
import { main } from "../src/cli/main.js";
import { sampleMetadata } from "./helpers/metadata-fixtures.js";
import { useTempRepos } from "./helpers/temp-repos.js";

// Runs once, at the `at`-th holder check after the driver arms it (1: the first look's, before it reads the run).
const hook = vi.hoisted(() => ({ armed: null as null | (() => Promise<void>), at: 1 }));
vi.mock(import("../src/lock/liveness.js"), async (original) => {
  const m = await original();
  return {
    ...m,
    judgeLiveness: async (...a: Parameters<typeof m.judgeLiveness>) => {
      const run = hook.armed;
      if (run !== null && --hook.at === 0) {
        hook.armed = null;
        await run();
      }
      return m.judgeLiveness(...a);
    },
  };
});

/** Lands `run` at the `at`-th holder check from now. */
function arm(at: number, run: () => Promise<void>): void {
  hook.at = at;
  hook.armed = run;
}

const repo = useTempRepos("pk-follow-end-");
// Runs still held when a test ends (it failed before its holder let go).
const open = new Set<{ close(): Promise<void> }>();
afterEach(async () => {
  for (const run of [...open]) await run.close();
  hook.armed = null;
});

/** A run held by this process, written paused; `journalPaused` journals `paused` as runWorkflow does after it, `close` lets go. */
async function pausedRun(repoRoot: string, slug: string) {
  const store = createFsPlanStore({ repoRoot });
  const l = await store.lock(slug, { owner: { tool: "driver" } });
  if (!l.ok) throw l.error;
  const via = l.lock.store ?? store;
  const w1 = await via.writeMetadata(slug, sampleMetadata(slug, 0), null);
  if (!w1.ok) throw w1.error;
  const w2 = await via.writeMetadata(slug, { ...sampleMetadata(slug, 1), status: "paused" }, w1.metadata.generation);
  if (!w2.ok) throw w2.error;
  const run = {
    async journalPaused() {
      const e = await via.appendJournal(slug, { generation: w2.metadata.generation, at: new Date().toISOString(), event: "paused", data: { reason: "lunch" } });
      if (!e.ok) throw e.error;
    },
    async close() {
      if (!open.delete(this)) return;
      await l.lock.release();
      await store.close();
    },
  };
  open.add(run);
  return run;
}

async function watched(repoRoot: string, slug: string) {
  const events = [];
  for await (const e of watchRun(slug, { repoRoot, intervalMs: 1 })) events.push(e);
  return events;
}

async function followed(repoRoot: string, slug: string): Promise<{ code: number; out: string }> {
  let out = "";
  const io = { stdout: { write: (s: string) => void (out += s) }, stderr: { write: () => undefined }, stdin: Object.assign((async function* () {})(), { isTTY: false }), cwd: repoRoot, env: {}, now: () => new Date() };
  const code = await main(["journal", slug, "--follow", "--interval", "1", "--repo", repoRoot], io);
  return { code, out };
}

const controls = (events: Awaited<ReturnType<typeof watched>>) => events.filter((e) => e.type === "control").map((e) => (e.type === "control" ? e.event : ""));

// 1: the holder journals and lets go before the first look reads the run; 2: right after the look that saw the
// paused state (its holder alive); 3: it is slower than two looks of the follower, still holding the run paused.
describe.each([1, 2, 3])("a follower ending on a paused state, its holder's line and release at holder check %i", (at) => {
  it("watchRun yields the `paused` its holder journals, then ends", async () => {
    const repoRoot = repo();
    const run = await pausedRun(repoRoot, "p");
    arm(at, async () => {
      await run.journalPaused();
      await run.close();
    });
    const events = await watched(repoRoot, "p");
    expect(controls(events)).toEqual(["paused"]);
    expect(hook.armed).toBe(null);
    expect(events.at(-1)).toMatchObject({ type: "end", status: "paused" });
  });

  it("phasekit journal --follow prints it too", async () => {
    const repoRoot = repo();
    const run = await pausedRun(repoRoot, "q");
    arm(at, async () => {
      await run.journalPaused();
      await run.close();
    });
    const { code, out } = await followed(repoRoot, "q");
    expect(code).toBe(0);
    expect(out).toMatch(/#3 .* paused: lunch\n$/);
    expect(hook.armed).toBe(null);
  });
});

describe("a paused run whose holder has let go", () => {
  it("ends the follow at the first look", async () => {
    const repoRoot = repo();
    const run = await pausedRun(repoRoot, "r");
    await run.journalPaused();
    await run.close();
    arm(2, async () => undefined);
    const events = await watched(repoRoot, "r");
    expect(hook.armed).not.toBe(null);
    expect(controls(events)).toEqual(["paused"]);
    expect(events.at(-1)).toMatchObject({ type: "end", status: "paused" });
  });
});
