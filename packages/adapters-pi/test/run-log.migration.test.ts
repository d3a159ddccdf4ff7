import { describe, it, expect } from "vitest";
import { cpSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { openRunLog } from "../src/store/run-log/run-log.js";
import { readRunSteps } from "../src/store/run-steps.js";
import { runWorkflow } from "../src/run/run-workflow.js";

// Frozen: written by the checkpoint store before the run log existed (build and test completed, deploy failed).
const FIXTURE = fileURLToPath(new URL("./fixtures/legacy-run-v1", import.meta.url));

function copyOfFixture(): string {
  const runDir = path.join(mkdtempSync(path.join(tmpdir(), "phasekit-legacy-")), "run");
  cpSync(FIXTURE, runDir, { recursive: true });
  return runDir;
}

describe("run log migration from the checkpoint-log format (frozen fixture)", () => {
  it("opens an old run folder, reuses its completed steps, reruns the failed one, and continues", async () => {
    const runDir = copyOfFixture();
    const before = readFileSync(path.join(runDir, "checkpoints.ndjson"), "utf8");
    const rerun = (): never => {
      throw new Error("a completed legacy step was rerun");
    };
    const log = await openRunLog({ runDir });
    expect(await log.step("build", { target: "dist" }, rerun)).toMatchObject({ reused: true, output: { files: 3, ok: true } });
    expect(await log.step("test", { suite: "all" }, rerun)).toMatchObject({ reused: true, output: ["a.test.ts", "b.test.ts"] });
    expect(await log.step("deploy", { env: "prod" }, () => "deployed")).toMatchObject({ reused: false, reason: "failed", entry: { attempt: 2 } });
    expect(await log.step("notify", {}, () => "sent")).toMatchObject({ reused: false, reason: "no-record" });
    await log.close();
    // The old files are evidence and stay as they were; the next open continues from the run log alone.
    expect(readFileSync(path.join(runDir, "checkpoints.ndjson"), "utf8")).toBe(before);
    const again = await openRunLog({ runDir });
    for (const [key, input] of [["build", { target: "dist" }], ["test", { suite: "all" }], ["deploy", { env: "prod" }], ["notify", {}]] as const) {
      expect((await again.step(key, input, rerun)).reused, key).toBe(true);
    }
    await again.compact();
    await again.close();
    const third = await openRunLog({ runDir });
    expect(await third.step("build", { target: "dist" }, rerun)).toMatchObject({ reused: true, output: { files: 3, ok: true } });
    await third.close();
  });

  it("a changed input after migration reruns the step, as before", async () => {
    const runDir = copyOfFixture();
    const log = await openRunLog({ runDir });
    expect(await log.step("build", { target: "other" }, () => "x")).toMatchObject({ reused: false, reason: "input-changed" });
    await log.close();
  });
});

describe("runWorkflow on a plan folder of the earlier format", () => {
  it("resumes it: completed steps are reused, the failed one reruns, the CLI reads the steps", async () => {
    const repoRoot = mkdtempSync(path.join(tmpdir(), "phasekit-legacy-repo-"));
    const runDir = path.join(repoRoot, "ai_plan", "legacy");
    cpSync(FIXTURE, runDir, { recursive: true });
    const before = readFileSync(path.join(runDir, "checkpoints.ndjson"), "utf8");
    expect((await readRunSteps(runDir)).map((r) => `${r.stepId}:${r.status}`).sort()).toEqual(["build:completed", "deploy:failed", "test:completed"]);
    const rerun = (): never => {
      throw new Error("a completed legacy step was rerun");
    };
    const r = await runWorkflow({ repoRoot, target: "legacy", toolName: "t" }, async (ctx) => [
      await ctx.step("build", { target: "dist" }, rerun),
      await ctx.step("test", { suite: "all" }, rerun),
      await ctx.step("deploy", { env: "prod" }, () => "deployed"),
    ]);
    if (r.status !== "completed") throw new Error(r.status);
    expect(r.result).toEqual([{ files: 3, ok: true }, ["a.test.ts", "b.test.ts"], "deployed"]);
    expect(r.steps.map((s) => s.outcome)).toEqual(["reused", "reused", "ran"]);
    expect(readFileSync(path.join(runDir, "checkpoints.ndjson"), "utf8")).toBe(before);
    expect((await readRunSteps(runDir)).map((s) => `${s.stepId}:${s.status}:${s.attempt}`).sort()).toEqual(["build:completed:1", "deploy:completed:2", "test:completed:1"]);
  });
});
