/**
 * Issue 21: no progress in a runWorkflow body. The same step (same id and input) failing `sameStepFailures` times
 * in a row (default 3, DEFAULT_PROGRESS) pauses the run before its next attempt, with core's reason naming the
 * step; a resume gives it fresh tries. Another input, or a success in between, does not count.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadDefinitionFolders } from "../src/definitions/folders.js";
import { runWorkflow, type RunContext } from "@phasekit/adapters-pi";
import { metadataOn, useTempRepos } from "./helpers/temp-repos.js";

const repo = useTempRepos("pk-stepfail-");

/** Calls the step until it stops throwing (the body retries in a catch, as agents' code does). */
async function retryForever(ctx: RunContext, input: unknown, fn: () => string): Promise<string> {
  for (;;) {
    try {
      return await ctx.step("deploy", input, fn);
    } catch (error) {
      if ((error as { code?: string }).code === "RUN_PAUSED") throw error;
    }
  }
}

describe("runWorkflow: the same step failing", () => {
  it("pauses the run after 3 failures of the same step and input, naming the step; a resume tries again", async () => {
    const root = repo();
    let calls = 0;
    const options = { repoRoot: root, target: "flaky", toolName: "t", maxAttempts: 10 };
    const first = await runWorkflow(options, (ctx) =>
      retryForever(ctx, { env: "prod" }, () => {
        calls++;
        throw new Error("connection refused");
      }),
    );
    expect(calls).toBe(3);
    expect(first.status).toBe("paused");
    expect(metadataOn(root, "flaky")).toMatchObject({ status: "paused" });
    expect(JSON.stringify(first)).toContain('no progress: step \\"deploy\\" failed 3 times with the same input');
    const second = await runWorkflow(options, (ctx) =>
      retryForever(ctx, { env: "prod" }, () => {
        if (calls++ < 4) throw new Error("still refused");
        return "deployed";
      }),
    );
    expect(second.status).toBe("completed");
    expect(calls).toBe(5);
  });

  it("failures with different inputs, or a success in between, do not add up", async () => {
    const root = repo();
    const run = await runWorkflow({ repoRoot: root, target: "mixed", toolName: "t", maxAttempts: 10 }, async (ctx) => {
      const fail = () => {
        throw new Error("no");
      };
      for (const env of ["a", "b", "a", "b"]) await ctx.step("deploy", { env }, fail).catch(() => undefined);
      await ctx.step("deploy", { env: "a" }, () => "ok");
      await ctx.step("deploy", { env: "a" }, fail).catch(() => undefined);
      await ctx.step("deploy", { env: "a" }, fail).catch(() => undefined);
      return "went on";
    });
    expect(run.status).toBe("completed");
  });
});

describe("runWorkflow: the same step failing, with a phase's own threshold", () => {
  it("the current phase's sameStepFailures wins over the workflow's (as its budgets do)", async () => {
    const root = repo();
    const defs = path.join(root, "defs", "strict");
    mkdirSync(defs, { recursive: true });
    writeFileSync(path.join(defs, "workflow.yaml"), 'name: "Strict"\ndescription: "d"\nprogress:\n  sameStepFailures: 5\nphases:\n  - deploy.md\n');
    writeFileSync(path.join(defs, "deploy.md"), "---\nid: deploy\nname: Deploy\nprogress:\n  sameStepFailures: 2\n---\nDeploy.\n");
    const { registry } = loadDefinitionFolders([path.dirname(defs)]);
    let calls = 0;
    const run = await runWorkflow({ repoRoot: root, target: "strict", toolName: "t", maxAttempts: 10, workflow: { registry, workflowKey: "strict", taskDescription: "ship" } }, (ctx) =>
      retryForever(ctx, { env: "prod" }, () => {
        calls++;
        throw new Error("connection refused");
      }),
    );
    expect(run.status).toBe("paused");
    expect(calls).toBe(2);
    expect(JSON.stringify(run)).toContain('failed 2 times with the same input');
  });
});
