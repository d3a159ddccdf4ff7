/**
 * A run's holder that writes its last state and lets go while a look reads the run: the look's status must be
 * what the run says, never `crashed` (a `running` read, then a lock found gone). A look judges the holder before
 * it reads the state, so a holder gone at the check has written all it will, and one live at the check may
 * write after it (the next look sees that). The holder's write and release are landed inside the look's
 * liveness check, not by a clock.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createFsPlanStore } from "../src/store/plan-store.js";
import { watchRun } from "../src/cli/watch-run.js";
import { listRuns } from "../src/cli/run-view.js";
import { sampleMetadata } from "./helpers/metadata-fixtures.js";
import { useTempRepos } from "./helpers/temp-repos.js";

// Runs once, at the first liveness check of the run's folder after the driver arms it.
const hook = vi.hoisted(() => ({ armed: null as null | (() => Promise<void>) }));
vi.mock(import("../src/lock/liveness.js"), async (original) => {
  const m = await original();
  return {
    ...m,
    judgeLiveness: async (...a: Parameters<typeof m.judgeLiveness>) => {
      const run = hook.armed;
      if (run !== null) {
        hook.armed = null;
        await run();
      }
      return m.judgeLiveness(...a);
    },
  };
});

const repo = useTempRepos("pk-watch-race-");
const open = new Set<() => Promise<void>>();
afterEach(async () => {
  hook.armed = null;
  for (const close of [...open]) await close();
});

/** A run held by this process and written running; `pause` writes it paused and lets go, as runWorkflow does. */
async function heldRun(repoRoot: string, slug: string) {
  const store = createFsPlanStore({ repoRoot });
  const l = await store.lock(slug, { owner: { tool: "driver" } });
  if (!l.ok) throw l.error;
  const via = l.lock.store ?? store;
  const w1 = await via.writeMetadata(slug, sampleMetadata(slug, 0), null);
  if (!w1.ok) throw w1.error;
  const close = async () => {
    open.delete(close);
    await l.lock.release();
    await store.close();
  };
  open.add(close);
  return {
    async pause() {
      const w2 = await via.writeMetadata(slug, { ...sampleMetadata(slug, 1), status: "paused" }, w1.metadata.generation);
      if (!w2.ok) throw w2.error;
      await close();
    },
  };
}

describe("a holder that pauses and lets go while a list reads the runs", () => {
  it("listRuns shows the run paused, not crashed", async () => {
    const repoRoot = repo();
    const run = await heldRun(repoRoot, "listed");
    // The list reads every state first, then each holder: the holder pauses and lets go in between.
    hook.armed = () => run.pause();
    const runs = await listRuns({ repoRoot }, Date.now());
    expect(hook.armed).toBe(null);
    expect(runs.map((r) => [r.id, r.status])).toEqual([["listed", "paused"]]);
  });
});

describe("a holder that pauses and lets go during a look", () => {
  it("watchRun ends paused, not crashed", async () => {
    const repoRoot = repo();
    const run = await heldRun(repoRoot, "race");
    const iterator = watchRun("race", { repoRoot, intervalMs: 1 });
    // The holder writes `paused` and lets go at the first liveness check the watcher makes (inside its first look).
    hook.armed = () => run.pause();
    const events = [];
    for await (const e of iterator) events.push(e);
    expect(hook.armed).toBe(null);
    const statuses = events.filter((e) => e.type === "status").map((e) => (e.type === "status" ? e.status : ""));
    expect(statuses).not.toContain("crashed");
    expect(events.at(-1)).toMatchObject({ type: "end", status: "paused" });
  });
});

describe("an unreadable run nobody holds", () => {
  it("watchRun throws its typed error naming the folder, with no `end` event", async () => {
    const repoRoot = repo();
    const runDir = path.join(repoRoot, "ai_plan", "broken");
    mkdirSync(runDir, { recursive: true });
    writeFileSync(path.join(runDir, "workflow.json"), "{ not json");
    const events: string[] = [];
    const watching = (async () => {
      for await (const e of watchRun("broken", { repoRoot, intervalMs: 1 })) events.push(e.type);
    })();
    await expect(watching).rejects.toMatchObject({ code: "CORRUPT_FILE", message: expect.stringContaining("cannot be watched") });
    expect(events).not.toContain("end");
  });
});
