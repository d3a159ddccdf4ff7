import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createReporter, runWorkflow } from "@phasekit/adapters-pi";
import { releasePhaseOrder, releaseRunBody, seedRepo } from "../../../examples/release-run.js";
import { releaseRegistry } from "../../../examples/release-workflow.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const options = (repo: string) => ({
  repoRoot: repo,
  target: "rel",
  toolName: "release-bot",
  workflow: { registry: releaseRegistry(), workflowKey: "release", taskDescription: "Ship" },
  createReporter: () => createReporter({ onChange: () => undefined }),
});

describe("the demo's durable release run (examples/release-run.ts)", () => {
  it("visits the concrete phases in the order the core advances through them", () => {
    expect(releasePhaseOrder()).toEqual(["build", "static-analysis", "threat-model", "dependency-audit", "publish"]);
  });

  it("completes the core workflow alongside the steps, and a second run reuses every step", async () => {
    const repo = mkdtempSync(path.join(tmpdir(), "pk-rel-"));
    dirs.push(repo);
    seedRepo(repo);
    const first = await runWorkflow(options(repo), (ctx) => releaseRunBody(ctx, repo));
    if (first.status !== "completed") throw new Error(first.status);
    expect(first.steps.every((s) => s.outcome === "ran")).toBe(true);
    expect((first.metadata.state as { status: string }).status).toBe("completed");
    const second = await runWorkflow({ ...options(repo), reenter: true }, (ctx) => releaseRunBody(ctx, repo));
    if (second.status !== "completed") throw new Error(second.status);
    expect(second.steps.map((s) => s.outcome)).toEqual(["reused", "reused", "reused", "reused", "reused"]);
    expect(second.result).toEqual(first.result);
    expect(readFileSync(path.join(repo, "side-effects.log"), "utf8").trim().split("\n")).toHaveLength(5);
  });
});
