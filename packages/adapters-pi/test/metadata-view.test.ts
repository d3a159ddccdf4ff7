import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createFsPlanStore, runWorkflow } from "../src/index.js";
import { useTempRepos } from "./helpers/temp-repos.js";

const repo = useTempRepos("pk-view-");
const now = () => new Date("2030-01-01T00:00:00.000Z");

/** A run that completed, and the workflow.json it had while it was running (what a late rename puts back). */
async function completedRun(root: string, slug: string): Promise<{ file: string; running: string; completed: string }> {
  const file = path.join(root, "ai_plan", slug, "workflow.json");
  let running = "";
  await runWorkflow({ repoRoot: root, target: slug, toolName: "t" }, async (ctx) => {
    running = readFileSync(file, "utf8");
    return ctx.step("s", {}, () => "v");
  });
  return { file, running, completed: readFileSync(file, "utf8") };
}

describe("workflow.json is a view of the history", () => {
  it("every claim re-renders it when a displaced holder's late rename set it back", async () => {
    const root = repo();
    const { file, running, completed } = await completedRun(root, "late");
    expect(JSON.parse(running)).toMatchObject({ status: "running" });
    expect(JSON.parse(completed)).toMatchObject({ status: "completed" });
    // The displaced holder, frozen inside its last refresh, renames its older document in after the run ended.
    writeFileSync(file, running);
    const store = createFsPlanStore({ repoRoot: root });
    try {
      const lock = await store.lock("late", { owner: { tool: "reader-with-lock" } });
      if (!lock.ok) throw lock.error;
      expect(readFileSync(file, "utf8")).toBe(completed);
      await lock.lock.release();
      // A missing file is rendered too.
      rmSync(file);
      const again = await store.lock("late", { owner: { tool: "reader-with-lock" } });
      if (!again.ok) throw again.error;
      await again.lock.release();
      expect(readFileSync(file, "utf8")).toBe(completed);
    } finally {
      await store.close();
    }
  });

  it("a damaged workflow.json is evidence: a claim leaves it as it is", async () => {
    const root = repo();
    const { file } = await completedRun(root, "damaged");
    writeFileSync(file, '{"schemaVersion": 1, "slug": ');
    const store = createFsPlanStore({ repoRoot: root });
    try {
      const lock = await store.lock("damaged", { owner: { tool: "t" } });
      if (!lock.ok) throw lock.error;
      await lock.lock.release();
    } finally {
      await store.close();
    }
    expect(readFileSync(file, "utf8")).toBe('{"schemaVersion": 1, "slug": ');
  });

  it("gc and list decide from the history: a run that crashed while running is kept though the late file says completed", async () => {
    const root = repo();
    const { file, completed } = await completedRun(root, "crashed");
    // Re-entered by another runner, which recorded `running` (generation up by one) and then died in a step.
    const store = createFsPlanStore({ repoRoot: root });
    try {
      const lock = await store.lock("crashed", { owner: { tool: "t" } });
      if (!lock.ok) throw lock.error;
      const read = await store.readMetadata("crashed");
      if (!read.ok || read.metadata === null) throw new Error("no metadata");
      const { schemaVersion: _v, generation, ...rest } = read.metadata;
      const w = await store.writeMetadata("crashed", { ...rest, status: "running", currentStepId: "next" }, generation);
      if (!w.ok) throw w.error;
      await lock.lock.release();
    } finally {
      await store.close();
    }
    // The earlier holder's late rename puts `completed` back on disk.
    writeFileSync(file, completed);
    const reader = createFsPlanStore({ repoRoot: root });
    try {
      const listed = await reader.list();
      expect(listed).toMatchObject([{ slug: "crashed", ok: true, metadata: { status: "running" } }]);
      const report = await reader.gc({ keep: 0, now });
      expect(report.removed).toEqual([]);
      expect(report.kept).toMatchObject([{ slug: "crashed", reason: "active", status: "running" }]);
      expect(existsSync(path.join(root, "ai_plan", "crashed"))).toBe(true);
    } finally {
      await reader.close();
    }
  });

  it("gc still removes a run whose history says finished", async () => {
    const root = repo();
    await completedRun(root, "finished");
    const store = createFsPlanStore({ repoRoot: root });
    try {
      const report = await store.gc({ keep: 0, now });
      expect(report.removed).toMatchObject([{ slug: "finished", reason: "beyond-keep", status: "completed" }]);
    } finally {
      await store.close();
    }
    expect(existsSync(path.join(root, "ai_plan", "finished"))).toBe(false);
  });
});
