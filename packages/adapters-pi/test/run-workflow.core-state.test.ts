import { mkdirSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { pidSpaceTag } from "../src/io/process-space.js";
import { useTempRepos } from "./helpers/temp-repos.js";
import { execFileSync } from "node:child_process";
import { isWorkflowError } from "@phasekit/core";
import { analyzeResumeTarget, createReporter, requestPause, resolveVerificationConfig, runWorkflow, type RunContext } from "@phasekit/adapters-pi";
import { isRunId } from "@phasekit/adapters-pi/plan-folder";
import { releaseRegistry } from "../../../examples/release-workflow.js";

const repo = useTempRepos("pk-core-");
function onDisk(root: string, slug: string): { status: string; phase?: string; state: { status: string; cancelPending: boolean; currentPath: unknown[]; generation: number } } {
  return JSON.parse(readFileSync(path.join(root, "ai_plan", slug, "workflow.json"), "utf8"));
}
const withRelease = (root: string, target?: string) => ({
  repoRoot: root,
  ...(target ? { target } : {}),
  toolName: "release-bot",
  workflow: { registry: releaseRegistry(), workflowKey: "release", taskDescription: "Ship" },
  createReporter: () => createReporter({ onChange: () => undefined }),
});

describe("runWorkflow with a core workflow", () => {
  it("persists each dispatched move, never an armed cancel; a confirmed cancel ends the run cancelled", async () => {
    const root = repo();
    const seen: Array<{ pending: boolean; onDiskPending: boolean }> = [];
    const r = await runWorkflow(withRelease(root, "cx"), async (ctx: RunContext) => {
      const wf = ctx.workflow;
      if (wf === null) throw new Error("no workflow");
      expect((await wf.dispatch({ type: "advance" })).ok).toBe(true);
      expect(onDisk(root, "cx")).toMatchObject({ phase: "static-analysis" });
      const armed = await wf.dispatch({ type: "cancel" });
      expect(armed.ok && armed.happened.type).toBe("cancel-armed");
      seen.push({ pending: wf.state().cancelPending, onDiskPending: onDisk(root, "cx").state.cancelPending });
      const confirmed = await wf.dispatch({ type: "cancel" });
      expect(confirmed.ok && confirmed.happened.type).toBe("cancelled");
      return "done";
    });
    expect(seen).toEqual([{ pending: true, onDiskPending: false }]);
    // workflow.json agrees with core: the run ended cancelled, not "completed".
    expect(r).toMatchObject({ status: "cancelled", reason: "the workflow was cancelled" });
    expect(onDisk(root, "cx")).toMatchObject({ status: "cancelled", state: { status: "cancelled", cancelPending: false } });
  });

  it("an armed cancel does not survive into the next run: a single cancel there only arms again", async () => {
    const root = repo();
    await runWorkflow(withRelease(root, "arm"), async (ctx) => {
      await ctx.workflow?.dispatch({ type: "cancel" }); // armed, then the process "ends" without confirming
      return "stopped early";
    });
    expect(onDisk(root, "arm")).toMatchObject({ status: "paused", state: { status: "running", cancelPending: false } });
    await runWorkflow(withRelease(root, "arm"), async (ctx) => {
      const once = await ctx.workflow?.dispatch({ type: "cancel" });
      expect(once?.ok && once.happened.type).toBe("cancel-armed");
      return "x";
    });
  });

  it("a refused move changes nothing on disk and reports its code", async () => {
    const root = repo();
    await runWorkflow(withRelease(root, "ref"), async (ctx) => {
      const before = readFileSync(path.join(root, "ai_plan", "ref", "workflow.json"), "utf8");
      const refused = await ctx.workflow?.dispatch({ type: "loop" }); // release is not loopable
      expect(refused?.ok === false && refused.error.code).toBe("NOT_LOOPABLE");
      expect(readFileSync(path.join(root, "ai_plan", "ref", "workflow.json"), "utf8")).toBe(before);
      return "x";
    });
  });

  it("a body that returns before the workflow finished leaves the run paused and resumable", async () => {
    const root = repo();
    const r = await runWorkflow(withRelease(root, "half"), async (ctx) => {
      await ctx.workflow?.dispatch({ type: "advance" });
      return "half";
    });
    expect(r).toMatchObject({ status: "paused" });
    expect(onDisk(root, "half")).toMatchObject({ status: "paused", phase: "static-analysis", state: { status: "running" } });
    expect(await analyzeResumeTarget({ repoRoot: root, target: "half", invokedTool: "release-bot" })).toMatchObject({ kind: "resumable", phase: "static-analysis" });
  });
});

describe("runWorkflow: the lifecycle's moves and a replaying body", () => {
  it("a body resumed after a pause continues from the run's latest state: its next move never steps the state's generation back", async () => {
    const root = repo();
    const generations: number[] = [];
    const body = async (ctx: RunContext) => {
      const wf = ctx.workflow;
      if (wf === null) throw new Error("no workflow");
      expect((await wf.dispatch({ type: "advance" })).ok).toBe(true);
      if (generations.length === 0) await requestPause({ repoRoot: root, target: "gen", reason: "a break" });
      generations.push(onDisk(root, "gen").state.generation);
      await ctx.step("s1", {}, () => 1);
      // Replayed, then live: the second advance moves from the state the run is in now (paused, then resumed).
      expect((await wf.dispatch({ type: "advance" })).ok).toBe(true);
      generations.push(onDisk(root, "gen").state.generation);
      expect(wf.state().generation).toBe(onDisk(root, "gen").state.generation);
      return "x";
    };
    const first = await runWorkflow(withRelease(root, "gen"), body);
    expect(first).toMatchObject({ status: "paused", reason: "a break" });
    const paused = onDisk(root, "gen").state;
    expect(paused.status).toBe("paused");
    const second = await runWorkflow(withRelease(root, "gen"), body);
    expect(second.status).toBe("paused"); // the body returned mid-way
    const [, atResume, afterMove] = generations as [number, number, number];
    // At resume the lifecycle moved the state on (resumed): the body's next move comes after that, not before.
    expect(atResume).toBeGreaterThan(paused.generation);
    expect(afterMove).toBeGreaterThan(atResume);
    expect(onDisk(root, "gen")).toMatchObject({ status: "paused", phase: "threat-model", state: { status: "running" } });
  });
});

describe("runWorkflow: a body that diverges from its history", () => {
  it("moves on from the replayed state but never behind the run's generation", async () => {
    const root = repo();
    const first = await runWorkflow(withRelease(root, "div"), async (ctx) => {
      expect((await ctx.workflow?.dispatch({ type: "advance" }))?.ok).toBe(true);
      await requestPause({ repoRoot: root, target: "div", reason: "a break" });
      return ctx.step("s1", {}, () => 1);
    });
    expect(first.status).toBe("paused");
    const resumedAt: number[] = [];
    const second = await runWorkflow(withRelease(root, "div"), async (ctx) => {
      resumedAt.push(onDisk(root, "div").state.generation);
      // Another first move than the history holds: live from the recorded starting state.
      expect((await ctx.workflow?.dispatch({ type: "cancel" }))?.ok).toBe(true);
      const confirmed = await ctx.workflow?.dispatch({ type: "cancel" });
      expect(confirmed?.ok && confirmed.happened.type).toBe("cancelled");
      return "x";
    });
    expect(second.status).toBe("cancelled");
    expect(onDisk(root, "div").state.generation).toBeGreaterThan(resumedAt[0] as number);
  });
});

describe("runWorkflow ids and attempts", () => {
  it("a run without a target gets an 8-character id and is resumed by that id", async () => {
    const root = repo();
    let calls = 0;
    const body = async (ctx: RunContext) => ctx.step("only", {}, () => ++calls);
    const first = await runWorkflow({ repoRoot: root, toolName: "t" }, body);
    expect(isRunId(first.slug)).toBe(true);
    const again = await runWorkflow({ repoRoot: root, target: first.slug, toolName: "t", reenter: true }, body);
    expect(again.status === "completed" && again.steps[0]?.outcome).toBe("reused");
    expect(calls).toBe(1);
  });

  it("maxAttempts counts tries of the current input only, not earlier successes with other inputs", async () => {
    const root = repo();
    const run = (input: number, fail: boolean) =>
      runWorkflow({ repoRoot: root, target: "att", toolName: "t", maxAttempts: 2, reenter: true }, async (ctx) =>
        ctx.step("s", { input }, () => {
          if (fail) throw new Error(`fail ${input}`);
          return input;
        }),
      );
    await run(1, false);
    await run(2, false);
    await expect(run(3, true)).rejects.toThrow("fail 3");
    await expect(run(3, true)).rejects.toThrow("fail 3"); // second try of input 3: still allowed
    const capped = await run(3, true).then(() => null, (e: unknown) => e);
    expect(isWorkflowError(capped, "MAX_ATTEMPTS_REACHED")).toBe(true);
    expect((await run(4, false)).status).toBe("completed"); // a new input starts a new budget
  });
});

describe("runWorkflow and a damaged plan folder", () => {
  it("an earlier version's journal.ndjson damaged in the middle is kept byte for byte, reported, and does not stop the run", async () => {
    const root = repo();
    await runWorkflow(withRelease(root, "jr"), async (ctx) => ctx.step("a", {}, () => 1));
    const file = path.join(root, "ai_plan", "jr", "journal.ndjson");
    // This version writes no journal file: the journal is rendered from the history.
    expect(existsSync(file)).toBe(false);
    const line = (seq: number) => JSON.stringify({ seq, generation: seq, at: "2026-01-01T00:00:00.000Z", event: "step-reused" });
    writeFileSync(file, [line(1), '{"seq": "garbage"', line(3), ""].join("\n"));
    const damaged = readFileSync(file, "utf8");
    const warnings: string[] = [];
    const r = await runWorkflow(
      { ...withRelease(root, "jr"), reenter: true, createReporter: () => createReporter({ onChange: (m) => m.forEach((x) => x.level === "warning" && warnings.push(x.text)) }) },
      async (ctx) => {
        // A dispatch journals its move: the damaged file is met here, reported, and the run goes on.
        expect((await ctx.workflow?.dispatch({ type: "advance" }))?.ok).toBe(true);
        return ctx.step("b", {}, () => 2);
      },
    );
    // The body ended with the workflow mid-way (paused, as D9 says), its move and step on disk.
    expect(r.status).toBe("paused");
    expect(onDisk(root, "jr")).toMatchObject({ status: "paused", phase: "static-analysis" });
    expect(readFileSync(file, "utf8")).toBe(damaged);
    expect(warnings, JSON.stringify(warnings)).toContainEqual(expect.stringMatching(/^journal: .*journal\.ndjson/));
  });

  it("a temp file left in artifacts/ by a crashed writer is removed when the run is opened", async () => {
    const root = repo();
    await runWorkflow({ repoRoot: root, target: "tmp", toolName: "t" }, async (ctx) => ctx.step("a", {}, () => ({ big: "x" })));
    // Outputs this small live in the run log; the folder exists when an earlier, larger output was written.
    mkdirSync(path.join(root, "ai_plan", "tmp", "artifacts"), { recursive: true });
    const leftover = path.join(root, "ai_plan", "tmp", "artifacts", `.deadbeef.json.99999999-${pidSpaceTag()}.0123456789ab.tmp`);
    writeFileSync(leftover, "half");
    await runWorkflow({ repoRoot: root, target: "tmp", toolName: "t", reenter: true }, async (ctx) => ctx.step("a", {}, () => ({ big: "x" })));
    expect(existsSync(leftover)).toBe(false);
  });
});

describe("ctx.verify", () => {
  it("reuses a pass from the run's cache although the run keeps writing its plan folder inside the repository", async () => {
    const root = repo();
    const git = (...args: string[]) => execFileSync("git", ["-c", "user.email=a@b", "-c", "user.name=n", "-c", "commit.gpgsign=false", ...args], { cwd: root });
    writeFileSync(path.join(root, "app.js"), "export const x = 1;\n");
    git("init", "-q");
    git("add", ".");
    git("commit", "-q", "-m", "init");
    const policy = resolveVerificationConfig("t", {}, { stages: ["custom"], commands: ["check"], cache: "run" });
    let ran = 0;
    const runCommand = async () => (ran++, { ok: true as const, output: "fine", durationMs: 1 });
    const r = await runWorkflow({ repoRoot: root, target: "ver", toolName: "t" }, async (ctx) => {
      const first = await ctx.verify(policy, { runCommand });
      await ctx.step("edit-nothing", {}, () => "ok"); // writes workflow.json, checkpoints, artifacts under ai_plan/
      const second = await ctx.verify(policy, { runCommand });
      writeFileSync(path.join(root, "app.js"), "export const x = 2;\n"); // a real change must miss the cache
      const third = await ctx.verify(policy, { runCommand });
      return [first, second, third].map((o) => (o.ok ? o.results.map((c) => c.status).join(",") : "failed"));
    });
    expect(r.status === "completed" && r.result).toEqual(["passed", "cached", "passed"]);
    expect(ran).toBe(2);
  });
});
