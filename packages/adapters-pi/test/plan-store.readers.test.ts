import { readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { isWorkflowError } from "@phasekit/core";
import { createFsPlanStore, runWorkflow } from "../src/index.js";
import { useTempRepos } from "./helpers/temp-repos.js";

const repo = useTempRepos("pk-readers-");
const now = () => new Date();

describe("readers never write: a second store reading a live run claims nothing", () => {
  it("checkpoints().records() from a store without the lock leaves the live run's holder in place", async () => {
    const root = repo();
    const reader = createFsPlanStore({ repoRoot: root });
    let seen: string[] = [];
    let historyFiles: { before: string[]; after: string[] } | undefined;
    let refused: unknown;
    let ranThroughReader = false;
    try {
      const result = await runWorkflow({ repoRoot: root, target: "live", toolName: "t" }, async (ctx) => {
        await ctx.step("a", {}, () => "A");
        const runlog = path.join(root, "ai_plan", "live", "runlog");
        const before = readdirSync(runlog).sort();
        const cps = await reader.checkpoints("live", { now });
        seen = (await cps.records()).map((r) => `${r.stepId}:${r.status}`);
        expect(await cps.record("a")).toMatchObject({ status: "completed" });
        expect(await cps.commits()).toEqual([]);
        expect((await reader.list()).map((e) => e.slug)).toEqual(["live"]);
        historyFiles = { before, after: readdirSync(runlog).sort() };
        // The holder was not fenced off: its next step is acknowledged (it was LOCK_LOST when reading claimed).
        await ctx.step("b", {}, () => "B");
        refused = await cps.step("x", {}, () => ((ranThroughReader = true), "never")).catch((e: unknown) => e);
        await expect(cps.recordCommitIntent({ id: "c", message: "m", files: [] })).rejects.toMatchObject({ code: "LOCK_NOT_OWNED" });
        await expect(cps.compact()).rejects.toMatchObject({ code: "LOCK_NOT_OWNED" });
        return ctx.step("c", {}, () => "C");
      });
      expect(result.status).toBe("completed");
    } finally {
      await reader.close();
    }
    expect(seen).toContain("a:completed");
    expect(isWorkflowError(refused, "LOCK_NOT_OWNED")).toBe(true);
    expect(String((refused as Error).message)).toContain("opened to read");
    expect(ranThroughReader).toBe(false);
    expect(historyFiles?.after).toEqual(historyFiles?.before);
  });

  it("a metadata write without the lock while a live holder runs is refused (LOCKED naming it), and the run goes on", async () => {
    const root = repo();
    const other = createFsPlanStore({ repoRoot: root });
    let refused: unknown;
    try {
      const result = await runWorkflow({ repoRoot: root, target: "busy", toolName: "t" }, async (ctx) => {
        await ctx.step("a", {}, () => "A");
        const read = await other.readMetadata("busy");
        if (!read.ok || read.metadata === null) throw new Error("no metadata");
        const { schemaVersion: _v, generation, ...m } = read.metadata;
        refused = await other.writeMetadata("busy", { ...m, status: "completed" }, generation);
        await ctx.setPhase("after");
        return ctx.step("b", {}, () => "B");
      });
      expect(result.status).toBe("completed");
      expect(refused).toMatchObject({ ok: false, error: { code: "LOCKED", details: { value: { tool: "t" } } } });
    } finally {
      await other.close();
    }
  });
});
