import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { metadataOn, useTempRepos } from "./helpers/temp-repos.js";
import { isWorkflowError } from "@phasekit/core";
import { runWorkflow, type RunContext } from "@phasekit/adapters-pi";

const repo = useTempRepos("pk-resume-");
const meta = metadataOn;

describe("runWorkflow ownership, resume and caps", () => {
  it("refuses a run owned by another tool, allows a listed takeover and a nested phase of the owner", async () => {
    const root = repo();
    await runWorkflow({ repoRoot: root, target: "plan-x", toolName: "planner" }, async () => "planned");
    const refused = await runWorkflow({ repoRoot: root, target: "plan-x", toolName: "implementer" }, async () => "x").then(
      () => null,
      (e: unknown) => e,
    );
    expect(isWorkflowError(refused, "OWNED_BY_OTHER")).toBe(true);
    const handoff = await runWorkflow({ repoRoot: root, target: "plan-x", toolName: "implementer", allowOwnerTakeoverFrom: ["planner"], reenter: true }, async () => "done");
    expect(handoff.status).toBe("completed");
    expect(meta(root, "plan-x")).toMatchObject({ ownerTool: "implementer", currentTool: "implementer" });
    await runWorkflow({ repoRoot: root, target: "auto-1", toolName: "auto" }, async () => "x");
    const nested = await runWorkflow({ repoRoot: root, target: "auto-1", toolName: "auto-plan", ownerTool: "auto", reenter: true }, async () => "y");
    expect(nested.status).toBe("completed");
    expect(meta(root, "auto-1")).toMatchObject({ ownerTool: "auto", currentTool: "auto-plan" });
  });

  it("a step killed after its checkpoint but before workflow.json is recorded as completed on resume", async () => {
    const root = repo();
    await runWorkflow({ repoRoot: root, target: "gap", toolName: "t" }, async (ctx) => ctx.step("s", {}, () => "v"));
    // Recreate the state a kill leaves behind: the checkpoint says completed, workflow.json still says in flight.
    const { createFsPlanStore } = await import("@phasekit/adapters-pi");
    const store = createFsPlanStore({ repoRoot: root });
    const read = await store.readMetadata("gap");
    if (!read.ok || read.metadata === null) throw new Error("no metadata");
    const { schemaVersion: _v, generation, lastCompletedStepId: _l, ...rest } = read.metadata;
    const w = await store.writeMetadata("gap", { ...rest, status: "running", currentStepId: "s" }, generation);
    expect(w.ok).toBe(true);
    await store.close();
    let ran = 0;
    const r = await runWorkflow({ repoRoot: root, target: "gap", toolName: "t" }, async (ctx) => ctx.step("s", {}, () => (ran++, "v")));
    expect(r.status === "completed" && r.steps).toEqual([{ stepId: "s", outcome: "reused", why: "completed checkpoint with the same input fingerprint" }]);
    expect(ran).toBe(0);
    const m = meta(root, "gap");
    expect(m.lastCompletedStepId).toBe("s");
    expect(m.currentStepId).toBeUndefined();
  });

  it("a corrupt workflow.json is a hard error and is kept byte for byte", async () => {
    const root = repo();
    const dir = path.join(root, "ai_plan", "broken");
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, "workflow.json"), '{"schemaVersion": 1, "slug": ');
    const error = await runWorkflow({ repoRoot: root, target: "broken", toolName: "t" }, async () => "x").then(() => null, (e: unknown) => e);
    expect(isWorkflowError(error, "CORRUPT_FILE")).toBe(true);
    expect(readFileSync(path.join(dir, "workflow.json"), "utf8")).toBe('{"schemaVersion": 1, "slug": ');
  });

  it("maxSteps ends a runaway body as failed with a clear reason", async () => {
    const root = repo();
    const error = await runWorkflow({ repoRoot: root, target: "loop", toolName: "t", maxSteps: 5 }, async (ctx) => {
      for (let i = 0; ; i++) await ctx.step(`s${i}`, {}, () => i);
    }).then(() => null, (e: unknown) => e);
    expect(isWorkflowError(error, "MAX_STEPS_REACHED")).toBe(true);
    expect(meta(root, "loop")).toMatchObject({ status: "failed" });
    expect(String(meta(root, "loop").failureReason)).toContain("maxSteps (5)");
  });

  it("maxAttempts stops retrying a step that keeps failing across resumes", async () => {
    const root = repo();
    let calls = 0;
    const body = async (ctx: RunContext) => ctx.step("flaky", {}, () => {
      calls++;
      throw new Error("still broken");
    });
    for (let i = 0; i < 2; i++) {
      await expect(runWorkflow({ repoRoot: root, target: "flaky", toolName: "t", maxAttempts: 2 }, body)).rejects.toThrow("still broken");
    }
    const error = await runWorkflow({ repoRoot: root, target: "flaky", toolName: "t", maxAttempts: 2 }, body).then(() => null, (e: unknown) => e);
    expect(isWorkflowError(error, "MAX_ATTEMPTS_REACHED")).toBe(true);
    expect(calls).toBe(2);
  });

  it("pause and stop requests written beside workflow.json end the run at the next step", async () => {
    const root = repo();
    const { requestPause, requestStop } = await import("@phasekit/adapters-pi");
    let ran: string[] = [];
    const body = async (ctx: RunContext) => {
      await ctx.step("a", {}, () => (ran.push("a"), 1));
      if (!ctx.resumed) await requestPause({ repoRoot: root, target: "ctl", reason: "lunch" });
      await ctx.step("b", {}, () => (ran.push("b"), 2));
      return "done";
    };
    const paused = await runWorkflow({ repoRoot: root, target: "ctl", toolName: "t" }, body);
    expect(paused).toMatchObject({ status: "paused", reason: "lunch" });
    expect(ran).toEqual(["a"]);
    expect(meta(root, "ctl")).toMatchObject({ status: "paused" });
    ran = [];
    const resumed = await runWorkflow({ repoRoot: root, target: "ctl", toolName: "t" }, body);
    expect(resumed.status).toBe("completed");
    expect(ran).toEqual(["b"]);

    const stopBody = async (ctx: RunContext) => {
      await ctx.step("a", {}, () => 1);
      await requestStop({ repoRoot: root, target: "stp", reason: "wrong branch" });
      await ctx.step("b", {}, () => 2);
      return "never";
    };
    const stopped = await runWorkflow({ repoRoot: root, target: "stp", toolName: "t" }, stopBody);
    expect(stopped).toMatchObject({ status: "cancelled", reason: "wrong branch" });
    expect(meta(root, "stp")).toMatchObject({ status: "cancelled", failureReason: "wrong branch" });
  });
});
