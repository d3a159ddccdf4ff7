/** Targets stay inside the plan root, final states stay final, and a new run id is reserved atomically. */
import { describe, expect, it } from "vitest";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import { isWorkflowError } from "@phasekit/core";
import { requestPause, requestStop, runWorkflow } from "@phasekit/adapters-pi";
import { nodeFs } from "../src/io/fs-port.js";
import { reserveNewRun } from "../src/run/setup.js";
import { useTempRepos } from "./helpers/temp-repos.js";

const repo = useTempRepos("pk-rules-");
const errorOf = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e);

describe("hostile targets", () => {
  const hostile = ["..", ".", "x/..", "%2e%2e/x", "../x", "./x", "ai_plan/../x", "ai_plan/a/b", "/tmp", "/etc/passwd-run"];
  for (const target of hostile) {
    it(`refuses ${JSON.stringify(target)} with a typed error and writes nothing outside the plan root`, async () => {
      const root = repo();
      mkdirSync(path.join(root, "x"));
      const before = readdirSync(root).sort();
      const e = await errorOf(runWorkflow({ repoRoot: root, target, toolName: "t" }, async (ctx) => ctx.step("s", {}, () => 1)));
      expect(isWorkflowError(e), String(e)).toBe(true);
      expect(["PATH_OUTSIDE_ROOT", "INVALID_SLUG"]).toContain((e as { code: string }).code);
      expect(readdirSync(root).sort()).toEqual(before);
      expect(existsSync(path.join(root, "workflow.json"))).toBe(false);
      const p = await errorOf(requestPause({ repoRoot: root, target }));
      expect(isWorkflowError(p)).toBe(true);
    });
  }
  it("accepts a path directly inside the plan root, relative or absolute", async () => {
    const root = repo();
    expect((await runWorkflow({ repoRoot: root, target: "ai_plan/rel", toolName: "t" }, async () => 1)).status).toBe("completed");
    expect((await runWorkflow({ repoRoot: root, target: path.join(root, "ai_plan", "abs"), toolName: "t" }, async () => 1)).status).toBe("completed");
  });
  it("refuses a repoRoot that does not exist instead of creating it", async () => {
    const root = path.join(repo(), "missing");
    const e = await errorOf(runWorkflow({ repoRoot: root, target: "a", toolName: "t" }, async () => 1));
    expect(isWorkflowError(e, "NOT_FOUND")).toBe(true);
    expect(existsSync(root)).toBe(false);
  });
});

describe("finished runs", () => {
  it("a completed run is refused unless reenter: true, and then reuses its steps", async () => {
    const root = repo();
    await runWorkflow({ repoRoot: root, target: "done", toolName: "t" }, async (ctx) => ctx.step("s", {}, () => 1));
    let ran = 0;
    const e = await errorOf(runWorkflow({ repoRoot: root, target: "done", toolName: "t" }, async () => ran++));
    expect(isWorkflowError(e, "RUN_FINISHED")).toBe(true);
    expect(ran).toBe(0);
    const again = await runWorkflow({ repoRoot: root, target: "done", toolName: "t", reenter: true }, async (ctx) => ctx.step("s", {}, () => (ran++, 1)));
    expect(again.status).toBe("completed");
    expect(ran).toBe(0);
  });
  it("a cancelled run is refused too; stop and pause on finished runs are refused", async () => {
    const root = repo();
    const r = await runWorkflow({ repoRoot: root, target: "c", toolName: "t" }, async (ctx) => {
      await requestStop({ repoRoot: root, target: "c" });
      await ctx.checkControl();
    });
    expect(r.status).toBe("cancelled");
    expect(isWorkflowError(await errorOf(runWorkflow({ repoRoot: root, target: "c", toolName: "t" }, async () => 1)), "RUN_FINISHED")).toBe(true);
    expect(isWorkflowError(await errorOf(requestStop({ repoRoot: root, target: "c" })), "RUN_FINISHED")).toBe(true);
    await runWorkflow({ repoRoot: root, target: "d", toolName: "t" }, async () => 1);
    expect(isWorkflowError(await errorOf(requestStop({ repoRoot: root, target: "d" })), "RUN_FINISHED")).toBe(true);
    expect(isWorkflowError(await errorOf(requestPause({ repoRoot: root, target: "d" })), "RUN_FINISHED")).toBe(true);
    expect(existsSync(path.join(root, "ai_plan", "d", "stop-request.json"))).toBe(false);
  });
  it("a pause for a run nobody is running (crashed, failed) is refused, so it cannot pause the next resume", async () => {
    const root = repo();
    await errorOf(runWorkflow({ repoRoot: root, target: "f", toolName: "t" }, async () => Promise.reject(new Error("boom"))));
    expect(isWorkflowError(await errorOf(requestPause({ repoRoot: root, target: "f" })), "NOT_RUNNING")).toBe(true);
    expect(existsSync(path.join(root, "ai_plan", "f", "pause-request.json"))).toBe(false);
  });
});

describe("run id reservation", () => {
  it("two new runs drawing the same ids never share a folder", async () => {
    const root = repo();
    // Both draw "aaaaaaaa" first, then "bbbbbbbb": the reservation (mkdir without recursive) decides.
    const source = () => {
      let n = 0;
      return (size: number) => new Uint8Array(size).fill(n++ < 1 ? 10 : 11);
    };
    const [a, b] = await Promise.all([reserveNewRun({ repoRoot: root }, nodeFs, source()), reserveNewRun({ repoRoot: root }, nodeFs, source())]);
    expect(new Set([a.slug, b.slug])).toEqual(new Set(["aaaaaaaa", "bbbbbbbb"]));
  });
});
