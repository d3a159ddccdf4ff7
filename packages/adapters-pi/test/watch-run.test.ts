/**
 * `watchRun`: a run's history as typed events while it runs, ending when the run has nothing more coming. The
 * run is in-process; the test moves it on only after the watcher has seen what came before (events, not clocks).
 */
import { describe, expect, it } from "vitest";
import { requestPause, runWorkflow, watchRun, type RunEvent } from "../src/index.js";
import { useTempRepos } from "./helpers/temp-repos.js";

const tempRepo = useTempRepos("phasekit-watch-");

/** A promise and its resolve. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

/** Collects the watcher's events; `until(p)` resolves once an event matching `p` arrived. */
function collect(iter: AsyncGenerator<RunEvent>) {
  const events: RunEvent[] = [];
  const waiters: Array<{ p: (e: RunEvent) => boolean; resolve: () => void }> = [];
  const done = (async () => {
    for await (const e of iter) {
      events.push(e);
      for (const w of waiters.splice(0)) (w.p(e) ? w.resolve : () => waiters.push(w))();
    }
  })();
  const until = (p: (e: RunEvent) => boolean) => (events.some(p) ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ p, resolve })));
  return { events, until, done };
}

describe("watchRun", () => {
  it("yields the steps as they complete, a failed attempt, the status, and ends with the run", async () => {
    const repoRoot = tempRepo();
    const started = gate();
    const seenA = gate();
    let tries = 0;
    const run = runWorkflow({ repoRoot, target: "watched", toolName: "watch-test" }, async (ctx) => {
      await ctx.step("a", {}, () => 1);
      started.open();
      await seenA.promise;
      return ctx.step("b", {}, () => {
        if (++tries === 1) throw new Error("flaky once");
        return 2;
      }, { retries: 1, backoffMs: 1 });
    });
    await started.promise;
    const watch = collect(watchRun("watched", { repoRoot, intervalMs: 10 }));
    await watch.until((e) => e.type === "step" && e.step === "a" && e.status === "completed");
    seenA.open();
    expect((await run).status).toBe("completed");
    await watch.done;
    const steps = watch.events.filter((e) => e.type === "step").map((e) => (e.type === "step" ? `${e.step}:${e.status}#${e.attempt}` : ""));
    expect(steps.filter((s) => !s.includes("running"))).toEqual(["a:completed#1", "b:failed#1", "b:completed#2"]);
    expect(watch.events.find((e) => e.type === "status")).toMatchObject({ type: "status", status: "running" });
    expect(watch.events.at(-2)).toMatchObject({ type: "status", status: "completed" });
    expect(watch.events.at(-1)).toMatchObject({ type: "end", status: "completed" });
  });

  it("a pause requested from outside is a control event, then the paused status ends the watch", async () => {
    const repoRoot = tempRepo();
    const started = gate();
    const release = gate();
    const run = runWorkflow({ repoRoot, target: "paused-run", toolName: "watch-test" }, async (ctx) => {
      await ctx.step("a", {}, () => 1);
      started.open();
      await release.promise;
      await ctx.step("b", {}, () => 2);
    });
    await started.promise;
    const watch = collect(watchRun("paused-run", { repoRoot, intervalMs: 10 }));
    await watch.until((e) => e.type === "step" && e.step === "a");
    await requestPause({ repoRoot, target: "paused-run", reason: "lunch" });
    release.open();
    expect((await run).status).toBe("paused");
    await watch.done;
    const control = watch.events.filter((e) => e.type === "control");
    expect(control.length).toBeGreaterThan(0);
    expect(watch.events.at(-1)).toMatchObject({ type: "end", status: "paused" });
    expect(watch.events.some((e) => e.type === "step" && e.step === "b")).toBe(false);
  });

  it("stops without an error when its signal is aborted", async () => {
    const repoRoot = tempRepo();
    const started = gate();
    const release = gate();
    const run = runWorkflow({ repoRoot, target: "aborted-watch", toolName: "watch-test" }, async (ctx) => {
      await ctx.step("a", {}, () => 1);
      started.open();
      await release.promise;
    });
    await started.promise;
    const controller = new AbortController();
    const watch = collect(watchRun("aborted-watch", { repoRoot, intervalMs: 10, signal: controller.signal }));
    await watch.until((e) => e.type === "step");
    controller.abort();
    await watch.done;
    expect(watch.events.some((e) => e.type === "end")).toBe(false);
    release.open();
    await run;
  });
  it("yields what the run spent each time its recorded total grows (ctx.budget), in order", async () => {
    const repoRoot = tempRepo();
    const spentOnce = gate();
    const seenFirst = gate();
    const run = runWorkflow({ repoRoot, target: "budgeted", toolName: "watch-test", budgets: { turns: 10 } }, async (ctx) => {
      await ctx.budget.spend({ turns: 1, tokens: 100 });
      spentOnce.open();
      await seenFirst.promise;
      await ctx.budget.spend({ turns: 2, tokens: 50 });
      return ctx.step("after", {}, () => 1);
    });
    await spentOnce.promise;
    const watch = collect(watchRun("budgeted", { repoRoot, intervalMs: 10 }));
    await watch.until((e) => e.type === "budget");
    seenFirst.open();
    expect((await run).status).toBe("completed");
    await watch.done;
    const budgets = watch.events.flatMap((e) => (e.type === "budget" ? [{ turns: e.used.turns, tokens: e.used.tokens }] : []));
    expect(budgets).toEqual([
      { turns: 1, tokens: 100 },
      { turns: 3, tokens: 150 },
    ]);
  });
});
