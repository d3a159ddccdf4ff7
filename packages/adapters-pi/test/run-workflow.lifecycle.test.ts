import { readFileSync, rmSync } from "node:fs";
import { readRunSteps } from "../src/store/run-steps.js";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { isWorkflowError } from "@phasekit/core";
import { acquirePlanLock } from "@phasekit/adapters-pi/plan-folder";
import { createReporter, runWorkflow, type HookFailure, type RunContext, type RunWorkflowOptions } from "@phasekit/adapters-pi";
import { holdLock, metadataOn, useTempRepos } from "./helpers/temp-repos.js";

const repo = useTempRepos("pk-life-");
const meta = metadataOn;

/** Options whose every hook records its name in `log` (and can be told to throw). */
function recorded(root: string, log: string[], failing: ReadonlySet<string> = new Set(), failures: HookFailure[] = []): RunWorkflowOptions<string> {
  const hook = (name: string) => () => {
    log.push(name);
    if (failing.has(name)) throw new Error(`${name} exploded`);
  };
  return {
    repoRoot: root,
    target: "run-1",
    toolName: "tool-a",
    createReporter: () => {
      log.push("createReporter");
      if (failing.has("createReporter")) throw new Error("createReporter exploded");
      return createReporter({ headless: false });
    },
    resolveBaseline: hook("resolveBaseline"),
    onSuccess: hook("onSuccess"),
    onError: hook("onError"),
    onLockHeld: hook("onLockHeld"),
    beforeReporterDispose: hook("beforeReporterDispose"),
    afterReporterDispose: hook("afterReporterDispose"),
    afterLockRelease: hook("afterLockRelease"),
    onHookFailure: (f) => failures.push(f),
  };
}
const CLEANUP = ["beforeReporterDispose", "afterReporterDispose", "afterLockRelease"];

describe("runWorkflow lifecycle order", () => {
  it("success: reporter, baseline, body, onSuccess, then the cleanup chain; status completed", async () => {
    const root = repo();
    const log: string[] = [];
    const r = await runWorkflow(recorded(root, log), async (ctx) => {
      log.push("body");
      return ctx.step("only", {}, () => "out");
    });
    expect(r.status).toBe("completed");
    expect(log).toEqual(["createReporter", "resolveBaseline", "body", "onSuccess", ...CLEANUP]);
    expect(meta(root, "run-1")).toMatchObject({ status: "completed", ownerTool: "tool-a", currentTool: "tool-a", lastCompletedStepId: "only" });
  });

  it("body error: onError, cleanup, and the ORIGINAL error rethrown; status failed with the reason", async () => {
    const root = repo();
    const log: string[] = [];
    const boom = new Error("body broke");
    const p = runWorkflow(recorded(root, log), async () => {
      log.push("body");
      throw boom;
    });
    await expect(p).rejects.toBe(boom);
    expect(log).toEqual(["createReporter", "resolveBaseline", "body", "onError", ...CLEANUP]);
    expect(meta(root, "run-1")).toMatchObject({ status: "failed", failureReason: "body broke" });
  });

  // Each hook that runs on a path is made to throw on that path: onError only runs when the body fails,
  // onSuccess only when it succeeds.
  for (const failing of ["resolveBaseline", "onError", ...CLEANUP]) {
    it(`a throwing ${failing} hides nothing and skips no later step (body fails)`, async () => {
      const root = repo();
      const log: string[] = [];
      const failures: HookFailure[] = [];
      const boom = new Error("body broke");
      const p = runWorkflow(recorded(root, log, new Set([failing]), failures), async () => {
        log.push("body");
        throw boom;
      });
      if (failing === "resolveBaseline") {
        // The baseline is part of the run: its error is the run's error, and the body never starts.
        await expect(p).rejects.toThrow("resolveBaseline exploded");
        expect(log).toEqual(["createReporter", "resolveBaseline", "onError", ...CLEANUP]);
      } else {
        await expect(p).rejects.toBe(boom);
        expect(log).toEqual(["createReporter", "resolveBaseline", "body", "onError", ...CLEANUP]);
      }
      if (failing !== "resolveBaseline") expect(failures.map((f) => f.hook)).toEqual([failing]);
      expect(meta(root, "run-1")).toMatchObject({ status: "failed" });
    });
  }

  for (const failing of ["resolveBaseline", "onSuccess", ...CLEANUP]) {
    it(`a throwing ${failing} skips no later step (body succeeds)`, async () => {
      const root = repo();
      const log: string[] = [];
      const failures: HookFailure[] = [];
      const p = runWorkflow(recorded(root, log, new Set([failing]), failures), async () => {
        log.push("body");
        return "ok";
      });
      if (failing === "resolveBaseline") {
        await expect(p).rejects.toThrow("resolveBaseline exploded");
        expect(log).toEqual(["createReporter", "resolveBaseline", "onError", ...CLEANUP]);
        return;
      }
      if (failing === "onSuccess") {
        // Success stays success on disk, but the hook's failure is reported as its own error.
        const error = await p.then(() => null, (e: unknown) => e);
        expect(isWorkflowError(error, "HOOK_FAILED")).toBe(true);
        expect((error as Error).message).toContain("onSuccess hook failed: onSuccess exploded");
        expect(meta(root, "run-1")).toMatchObject({ status: "completed" });
      } else {
        const r = await p;
        expect(r.status).toBe("completed");
        expect(r.hookFailures.map((f) => f.hook)).toEqual([failing]);
      }
      expect(log).toEqual(["createReporter", "resolveBaseline", "body", "onSuccess", ...CLEANUP]);
    });
  }

  it("a throwing createReporter fails the run as HOOK_FAILED (onError told, ctx null), still releases the lock", async () => {
    const root = repo();
    const log: string[] = [];
    const p = runWorkflow(recorded(root, log, new Set(["createReporter"])), async () => "never");
    await expect(p).rejects.toMatchObject({ code: "HOOK_FAILED" });
    expect(log).toEqual(["createReporter", "onError", ...CLEANUP]);
    expect(meta(root, "run-1")).toMatchObject({ status: "failed" });
    const again = await runWorkflow({ repoRoot: root, target: "run-1", toolName: "tool-a" }, async () => "now");
    expect(again.status).toBe("completed");
  });

  it("lock busy: onLockHeld with the holder, a LOCKED error, cleanup still runs; the holder keeps its lock", async () => {
    const root = repo();
    const held = { lock: await holdLock(root, "run-1") };
    const log: string[] = [];
    let bodyRan = false;
    const error = await runWorkflow(recorded(root, log), async () => {
      bodyRan = true;
      return "x";
    }).then(() => null, (e: unknown) => e);
    expect(isWorkflowError(error, "LOCKED")).toBe(true);
    expect((error as Error).message).toContain("other-tool");
    expect(bodyRan).toBe(false);
    expect(log).toEqual(["onLockHeld", ...CLEANUP]);
    await expect(held.lock.assertHeld()).resolves.toBeUndefined();
    await held.lock.release();
  });

  it("a throwing onLockHeld still ends in the LOCKED error, and a throwing reporter dispose skips no later step", async () => {
    const root = repo();
    const held = { lock: await holdLock(root, "run-1") };
    const log: string[] = [];
    const failures: HookFailure[] = [];
    const busy = await runWorkflow(recorded(root, log, new Set(["onLockHeld"]), failures), async () => "x").then(() => null, (e: unknown) => e);
    expect(isWorkflowError(busy, "LOCKED")).toBe(true);
    expect(failures.map((f) => f.hook)).toEqual(["onLockHeld"]);
    expect(log).toEqual(["onLockHeld", ...CLEANUP]);
    await held.lock.release();

    const log2: string[] = [];
    const failures2: HookFailure[] = [];
    const r = await runWorkflow(
      {
        ...recorded(root, log2, new Set(), failures2),
        createReporter: () => ({ ...createReporter({ headless: false }), dispose: () => void (log2.push("dispose"), (() => { throw new Error("dispose broke"); })()) }),
      },
      async () => "ok",
    );
    expect(r.status).toBe("completed");
    expect(failures2.map((f) => f.hook)).toEqual(["reporterDispose"]);
    expect(log2).toEqual(["resolveBaseline", "onSuccess", "beforeReporterDispose", "dispose", "afterReporterDispose", "afterLockRelease"]);
  });

  it("a throwing promptForResume rejects with its error and still releases the lock", async () => {
    const root = repo();
    await runWorkflow({ repoRoot: root, target: "run-1", toolName: "tool-a" }, async () => "first");
    const log: string[] = [];
    const p = runWorkflow({ ...recorded(root, log), reenter: true, promptForResume: () => { throw new Error("no terminal"); } }, async () => "x");
    await expect(p).rejects.toThrow("no terminal");
    expect(log).toEqual(CLEANUP);
    const again = await runWorkflow({ repoRoot: root, target: "run-1", toolName: "tool-a", reenter: true }, async () => "again");
    expect(again.status).toBe("completed");
  });

  it("declined resume ends cleanly: no body, metadata untouched, lock released", async () => {
    const root = repo();
    await runWorkflow({ repoRoot: root, target: "run-1", toolName: "tool-a" }, async (ctx) => ctx.step("s", {}, () => 1));
    const before = readFileSync(path.join(root, "ai_plan", "run-1", "workflow.json"), "utf8");
    const log: string[] = [];
    const r = await runWorkflow({ ...recorded(root, log), reenter: true, promptForResume: (info) => (log.push(`prompt:${info.metadata.status}`), false) }, async () => {
      log.push("body");
      return "x";
    });
    expect(r.status).toBe("declined");
    expect(log).toEqual(["prompt:completed", ...CLEANUP]);
    expect(readFileSync(path.join(root, "ai_plan", "run-1", "workflow.json"), "utf8")).toBe(before);
    const held = await acquirePlanLock({ runDir: path.join(root, "ai_plan", "run-1"), owner: { tool: "probe" } });
    expect(held.ok).toBe(true);
    if (held.ok) await held.lock.release();
  });

  it("lost lock mid-body: the next step throws LOCK_LOST, nothing more is written, cleanup runs", async () => {
    const root = repo();
    const log: string[] = [];
    let afterLoss = 0;
    const p = runWorkflow({ ...recorded(root, log), lock: { staleMs: 2_000, updateMs: 1_000 } }, async (ctx: RunContext) => {
      log.push("body");
      await ctx.step("before", {}, () => 1);
      // Another holder "takes over": the lock directory disappears under us, as after a stale takeover.
      rmSync(path.join(ctx.runDir, ".lock"), { recursive: true, force: true });
      await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
      return ctx.step("after", {}, () => String(++afterLoss));
    });
    const error = await p.then(() => null, (e: unknown) => e);
    expect(isWorkflowError(error, "LOCK_LOST")).toBe(true);
    expect(afterLoss).toBe(0);
    expect(log).toEqual(["createReporter", "resolveBaseline", "body", "onError", ...CLEANUP]);
    // The status was not rewritten to failed by a process that no longer holds the lock.
    expect(meta(root, "run-1")).toMatchObject({ status: "running" });
    // The step it completed before the loss is in the run log (steps are never written to workflow.json one by one).
    expect((await readRunSteps(path.join(root, "ai_plan", "run-1"))).map((r) => [r.stepId, r.status])).toEqual([["before", "completed"]]);
  }, 20_000);
});
