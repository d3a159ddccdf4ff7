/**
 * A follower that ends on a status its holder has just written still shows what the holder journals right after
 * it: runWorkflow writes the paused state, then journals `paused`, then lets go. A look reads the status and the
 * journal at one instant, so the follower reads the journal once more before it ends. The holder's journal line
 * is landed deterministically right after the look that sees `paused` (at its holder check), not by a clock.
 */
import { describe, expect, it, vi } from "vitest";
import { createFsPlanStore } from "../src/store/plan-store.js";
import { watchRun } from "../src/cli/watch-run.js";
import { main } from "../src/cli/main.js";
import { sampleMetadata } from "./helpers/metadata-fixtures.js";
import { useTempRepos } from "./helpers/temp-repos.js";

// Runs once, at the first holder check after the driver arms it: the moment after a look's reading.
const hook = vi.hoisted(() => ({ armed: null as null | (() => Promise<void>) }));
vi.mock(import("../src/cli/run-view.js"), async (original) => {
  const m = await original();
  return {
    ...m,
    holderLive: async (...a: Parameters<typeof m.holderLive>) => {
      const run = hook.armed;
      hook.armed = null;
      if (run !== null) await run();
      return m.holderLive(...a);
    },
  };
});

const repo = useTempRepos("pk-follow-end-");

/** A run held by this process, written paused; `journalPaused` journals `paused` as runWorkflow does after it. */
async function pausedRun(repoRoot: string, slug: string) {
  const store = createFsPlanStore({ repoRoot });
  const l = await store.lock(slug, { owner: { tool: "driver" } });
  if (!l.ok) throw l.error;
  const via = l.lock.store ?? store;
  const w1 = await via.writeMetadata(slug, sampleMetadata(slug, 0), null);
  if (!w1.ok) throw w1.error;
  const w2 = await via.writeMetadata(slug, { ...sampleMetadata(slug, 1), status: "paused" }, w1.metadata.generation);
  if (!w2.ok) throw w2.error;
  return {
    async journalPaused() {
      const e = await via.appendJournal(slug, { generation: w2.metadata.generation, at: new Date().toISOString(), event: "paused", data: { reason: "lunch" } });
      if (!e.ok) throw e.error;
    },
    async close() {
      await l.lock.release();
      await store.close();
    },
  };
}

describe("a follower ending on a status just written", () => {
  it("watchRun yields the `paused` its holder journals right after the look that saw the paused state", async () => {
    const repoRoot = repo();
    const run = await pausedRun(repoRoot, "p");
    hook.armed = () => run.journalPaused();
    const events = [];
    for await (const e of watchRun("p", { repoRoot, intervalMs: 1 })) events.push(e);
    await run.close();
    expect(hook.armed).toBe(null);
    expect(events.filter((e) => e.type === "control").map((e) => (e.type === "control" ? e.event : ""))).toEqual(["paused"]);
    expect(events.at(-1)).toMatchObject({ type: "end", status: "paused" });
  });

  it("phasekit journal --follow prints it too", async () => {
    const repoRoot = repo();
    const run = await pausedRun(repoRoot, "q");
    let out = "";
    const io = { stdout: { write: (s: string) => void (out += s) }, stderr: { write: () => undefined }, stdin: Object.assign((async function* () {})(), { isTTY: false }), cwd: repoRoot, env: {}, now: () => new Date() };
    hook.armed = () => run.journalPaused();
    expect(await main(["journal", "q", "--follow", "--interval", "1", "--repo", repoRoot], io)).toBe(0);
    await run.close();
    expect(hook.armed).toBe(null);
    expect(out).toMatch(/#3 .* paused: lunch\n$/);
  });
});
