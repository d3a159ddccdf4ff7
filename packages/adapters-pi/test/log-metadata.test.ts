/**
 * workflow.json as a view of the fenced run log: a displaced holder's metadata write never lands, a file left
 * behind by a late rename never decides, and a step writes nothing but the run log.
 */
import { describe, expect, it } from "vitest";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createFsPlanStore, METADATA_FILE, type PlanStore } from "../src/store/plan-store.js";
import { serializeWorkflowMetadata } from "../src/store/metadata.js";
import { runWorkflow } from "../src/run/run-workflow.js";
import { sampleMetadata } from "./helpers/metadata-fixtures.js";
import { useTempRepos } from "./helpers/temp-repos.js";

const repo = useTempRepos("pk-logmeta-");

async function write(store: PlanStore, slug: string, i: number, expected: number | null) {
  const w = await store.writeMetadata(slug, sampleMetadata(slug, i), expected);
  if (!w.ok) throw w.error;
  return w.metadata;
}

describe("workflow.json derived from the run log", () => {
  it("a holder displaced by a newer epoch has its metadata write refused with LOCK_LOST, and the file is not touched", async () => {
    const root = repo();
    const a = createFsPlanStore({ repoRoot: root });
    const b = createFsPlanStore({ repoRoot: root });
    try {
      const la = await a.lock("run", { owner: { tool: "a" }, staleMs: 2_000 });
      if (!la.ok) throw la.error;
      await write(a, "run", 0, null);
      const before = readFileSync(path.join(await a.runDir("run"), METADATA_FILE), "utf8");
      // The plan lock is taken over (its folder gone, as after a stale takeover) and B claims the next epoch.
      rmSync(path.join(await a.runDir("run"), ".lock"), { recursive: true, force: true });
      const lb = await b.lock("run", { owner: { tool: "b" } });
      if (!lb.ok) throw lb.error;
      // A still believes generation 1 is current; its write reaches the run log's fence and stops there.
      const late = await a.writeMetadata("run", sampleMetadata("run", 9), 1);
      expect(late.ok).toBe(false);
      expect(!late.ok && late.error.code).toBe("LOCK_LOST");
      expect(readFileSync(path.join(await a.runDir("run"), METADATA_FILE), "utf8")).toBe(before);
      const seen = await b.readMetadata("run");
      expect(seen.ok && seen.metadata?.generation).toBe(1);
      await lb.lock.release();
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("a stale workflow.json renamed in late never decides: readers and the next write go by the log", async () => {
    const root = repo();
    const store = createFsPlanStore({ repoRoot: root });
    try {
      const held = await store.lock("run", { owner: { tool: "t" } });
      if (!held.ok) throw held.error;
      const g1 = await write(store, "run", 0, null);
      await write(store, "run", 1, 1);
      const g3 = await write(store, "run", 2, 2);
      const file = path.join(await store.runDir("run"), METADATA_FILE);
      // What a displaced holder's late rename would leave: an older generation with other content.
      writeFileSync(file, serializeWorkflowMetadata({ ...g1, generation: 2, status: "failed", failureReason: "late writer" }));
      const held_ = await store.readMetadata("run");
      expect(held_.ok && held_.metadata).toEqual(g3);
      const other = createFsPlanStore({ repoRoot: root });
      const fresh = await other.readMetadata("run");
      expect(fresh.ok && fresh.metadata).toEqual(g3);
      expect((await other.list()).map((e) => e.ok && e.metadata?.generation)).toEqual([3]);
      await other.close();
      // The holder's next compare-and-set is against generation 3 (the log), and it repairs the file.
      const g4 = await write(store, "run", 3, 3);
      expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(g4);
      await held.lock.release();
    } finally {
      await store.close();
    }
  });

  it("a file newer than the log (written by a tool without the run log) is the later fact and wins", async () => {
    const root = repo();
    const store = createFsPlanStore({ repoRoot: root });
    try {
      const held = await store.lock("run", { owner: { tool: "t" } });
      if (!held.ok) throw held.error;
      const g1 = await write(store, "run", 0, null);
      await held.lock.release();
      const file = path.join(await store.runDir("run"), METADATA_FILE);
      writeFileSync(file, serializeWorkflowMetadata({ ...g1, generation: 2, status: "paused" }));
      const r = await store.readMetadata("run");
      expect(r.ok && r.metadata).toMatchObject({ generation: 2, status: "paused" });
    } finally {
      await store.close();
    }
  });

  it("a step miss writes the run log only: workflow.json keeps its generation and bytes", async () => {
    const root = repo();
    const r = await runWorkflow({ repoRoot: root, target: "steps", toolName: "t" }, async (ctx) => {
      const file = path.join(ctx.runDir, METADATA_FILE);
      const before = readFileSync(file, "utf8");
      for (let i = 0; i < 5; i++) await ctx.step(`s${i}`, { i }, () => ({ i }));
      return { same: readFileSync(file, "utf8") === before, generation: ctx.metadata().generation };
    });
    if (r.status !== "completed") throw new Error(r.status);
    expect(r.result).toEqual({ same: true, generation: 1 });
    // The end of the run folds the step facts in.
    expect(r.metadata).toMatchObject({ status: "completed", lastCompletedStepId: "s4", generation: 2 });
  });
});
