/**
 * Time travel with a core workflow: a fork starts from the workflow state its source had at the fork point (the
 * outcome of the last copied dispatch), and a rerun replays the dispatches before the step and moves the
 * workflow again from there: in both, the workflow ends where the source's did, never a phase further.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createReporter, forkRun, rerunFrom, runWorkflow, type RunContext } from "@phasekit/adapters-pi";
import { releaseRegistry } from "../../../examples/release-workflow.js";
import { readRunLog } from "../src/store/run-log/reader.js";
import { useTempRepos } from "./helpers/temp-repos.js";

const repo = useTempRepos("pk-tt-wf-");
const onDisk = (root: string, slug: string): { status: string; phase?: string; state: { currentPath: unknown[] } } =>
  JSON.parse(readFileSync(path.join(root, "ai_plan", slug, "workflow.json"), "utf8"));

/** Three steps, each followed by an advance (or those `advanceAfter` names); every step that runs is recorded in `effects`. */
function run(root: string, target: string, effects: string[], advanceAfter: readonly string[] = ["s1", "s2", "s3"]) {
  return runWorkflow(
    {
      repoRoot: root,
      target,
      toolName: "release-bot",
      workflow: { registry: releaseRegistry(), workflowKey: "release", taskDescription: "Ship" },
      createReporter: () => createReporter({ onChange: () => undefined }),
    },
    async (ctx: RunContext) => {
      for (const id of ["s1", "s2", "s3"]) {
        await ctx.step(id, { id }, () => {
          effects.push(id);
          return id;
        });
        if (!advanceAfter.includes(id)) continue;
        const moved = await ctx.workflow?.dispatch({ type: "advance" });
        if (moved?.ok !== true) throw new Error(`advance after ${id} refused`);
      }
      return "three phases on";
    },
  );
}

describe("time travel with a core workflow", () => {
  it("a fork starts at the source's workflow state there and ends where the source did", async () => {
    const root = repo();
    const effects: string[] = [];
    await run(root, "src", effects);
    const source = onDisk(root, "src");
    const fork = await forkRun({ repoRoot: root, target: "src", at: "s2", id: "f" });
    expect(fork.copied).toEqual(["phasekit:pi-definitions", "phasekit:workflow", "s1", "phasekit:dispatch#1"]);
    // The fork's state is one advance in, not three.
    expect(onDisk(root, "f").state.currentPath).not.toEqual(source.state.currentPath);
    effects.length = 0;
    await run(root, "f", effects);
    expect(effects).toEqual(["s2", "s3"]);
    expect(onDisk(root, "f")).toMatchObject({ phase: source.phase, state: { currentPath: source.state.currentPath } });
  });

  it("a rerun replays the dispatches before the step and ends where the run was, not further", async () => {
    const root = repo();
    const effects: string[] = [];
    await run(root, "r", effects);
    const before = onDisk(root, "r");
    const marked = await rerunFrom({ repoRoot: root, target: "r", from: "s2" });
    // The mark names the steps and the dispatches after s2 (made again, they write the state the rerun reaches).
    expect(marked.keys).toEqual(["s2", "phasekit:dispatch#2", "s3", "phasekit:dispatch#3"]);
    effects.length = 0;
    await run(root, "r", effects);
    expect(effects).toEqual(["s2", "s3"]);
    expect(onDisk(root, "r")).toMatchObject({ phase: before.phase, state: { currentPath: before.state.currentPath } });
  });

  it("a rerun whose body now dispatches less ends where that body takes the workflow, as a fresh run of it does, not where the first run went", async () => {
    const root = repo();
    await run(root, "r", []);
    await rerunFrom({ repoRoot: root, target: "r", from: "s2" });
    const effects: string[] = [];
    // s2 no longer advances: the rerun's body moves the workflow twice (the first run moved it three times).
    await run(root, "r", effects, ["s1", "s3"]);
    expect(effects).toEqual(["s2", "s3"]);
    const fresh = repo();
    await run(fresh, "r", [], ["s1", "s3"]);
    const want = onDisk(fresh, "r");
    expect(onDisk(root, "r")).toMatchObject({ phase: want.phase, state: { currentPath: want.state.currentPath } });
  });
});

describe("a rerun's marks at the end of a run whose workflow fails", () => {
  it("are spent for the steps the run did not reach, as at every end (run/run-end.ts)", async () => {
    const root = repo();
    await run(root, "r", []);
    await rerunFrom({ repoRoot: root, target: "r", from: "s2" });
    // The resumed body runs s1, then fails the workflow and returns: the run ends failed by the core's status.
    const ended = await runWorkflow(
      { repoRoot: root, target: "r", toolName: "release-bot", reenter: true, workflow: { registry: releaseRegistry(), workflowKey: "release", taskDescription: "Ship" }, createReporter: () => createReporter({ onChange: () => undefined }) },
      async (ctx: RunContext) => {
        await ctx.step("s1", { id: "s1" }, () => "s1");
        const failed = await ctx.workflow?.dispatch({ type: "fail", reason: "gave up" });
        if (failed?.ok !== true) throw new Error("fail refused");
        return "gave up";
      },
    );
    expect(ended).toMatchObject({ status: "failed", reason: "gave up" });
    const view = await readRunLog(path.join(root, "ai_plan", "r"));
    if (view === null) throw new Error("no run log");
    try {
      const spent = view.entries().filter((e) => e.key === "s2" || e.key === "s3").map((e) => `${e.key}:${String(e.superseded)}:${String(e.rerunSpent)}`);
      // Before: not spent (a core-failed end skipped the spend), so the run stayed rerun-pending for gc and rm.
      expect(spent).toEqual(["s2:true:true", "s3:true:true"]);
    } finally {
      view.close();
    }
  });
});

describe("rerun and the attempt cap", () => {
  it("a step that used up maxAttempts runs again after a rerun from it (a new start, attempt 1)", async () => {
    const root = repo();
    let fail = true;
    const body = (attempts: number[]) => async (ctx: RunContext) =>
      ctx.step("flaky", { n: 1 }, (_signal, attempt) => {
        attempts.push(attempt);
        if (fail) throw new Error("down");
        return "up";
      });
    const opts = { repoRoot: root, target: "cap", toolName: "t", maxAttempts: 1, createReporter: () => createReporter({ onChange: () => undefined }) };
    await expect(runWorkflow(opts, body([]))).rejects.toThrow("down");
    fail = false;
    await expect(runWorkflow(opts, body([]))).rejects.toMatchObject({ code: "MAX_ATTEMPTS_REACHED" });
    await rerunFrom({ repoRoot: root, target: "cap", from: "flaky" });
    const attempts: number[] = [];
    expect(await runWorkflow(opts, body(attempts))).toMatchObject({ status: "completed", result: "up" });
    expect(attempts).toEqual([1]);
  });
});
