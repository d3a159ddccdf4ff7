/**
 * What a run has spent, after time travel, as every backend must keep it (part of the history contract, run on
 * fs, memory and PostgreSQL): the total every reader shows is the running total of the run's current history,
 * the one its body's `ctx.budget.used()` reached. A rerun whose body spends fewer times than the first run did
 * leaves the first run's later budget entries in the history (evidence, superseded), never read as the total: not
 * after a replay, a compaction or a second rerun, and a fork copies the current history's entries only.
 */
import { expect, it } from "vitest";
import { createReporter, forkRun, rerunFrom, runWorkflow, type PlanStore, type RunContext } from "@phasekit/adapters-pi";
import { latestBudgetTotal } from "../../src/run/budget.js";
import { loadBudgetTotal } from "../../src/pi/durable-budget.js";

/** The cases, inside the history contract's describe; `open` returns an empty store, `repoRoot` a fresh folder. */
export function budgetRerunContractCases(open: () => Promise<PlanStore>, repoRoot: () => string): void {
  it("the total read after a rerun that spends fewer times is the rerun's, through a replay, a compaction, a second rerun and a fork", async () => {
    const store = await open();
    try {
      const root = repoRoot();
      // Steps s1..sN, each followed by a spend of one turn and 10·i tokens; the body returns what it saw spent.
      const body = (spends: number) => async (ctx: RunContext) => {
        for (let i = 1; i <= spends; i++) {
          await ctx.step(`s${i}`, { i }, () => i);
          await ctx.budget.spend({ turns: 1, tokens: 10 * i });
        }
        const { turns, tokens } = ctx.budget.used();
        return { turns, tokens };
      };
      const enter = (slug: string, spends: number) =>
        runWorkflow({ repoRoot: root, target: slug, toolName: "history-contract", store, reenter: true, createReporter: () => createReporter({ onChange: () => undefined }) }, body(spends));
      // Each way a reader takes the total: latestBudgetTotal (phasekit show on a store, the inspector) and the
      // pi extension's loadBudgetTotal, both under the run's lease as pi reads it when it takes a run.
      const totals = async (slug: string) => {
        const lock = await store.lock(slug, { owner: { tool: "reader" } });
        if (!lock.ok) throw lock.error;
        try {
          const held = lock.lock.store ?? store;
          const shown = await latestBudgetTotal(held, slug, () => new Date());
          const pi = await loadBudgetTotal(held, slug, Date.now());
          expect(pi?.total).toEqual(shown?.total);
          return { turns: shown?.total.turns, tokens: shown?.total.tokens };
        } finally {
          await lock.lock.release();
        }
      };
      const compact = async (slug: string) => {
        const lock = await store.lock(slug, { owner: { tool: "compactor" } });
        if (!lock.ok) throw lock.error;
        try {
          await (await (lock.lock.store ?? store).checkpoints(slug, { now: () => new Date() })).compact();
        } finally {
          await lock.lock.release();
        }
      };

      expect(await enter("spent", 5)).toMatchObject({ status: "completed", result: { turns: 5, tokens: 150 } });
      expect(await totals("spent")).toEqual({ turns: 5, tokens: 150 });
      // The rerun from s2: s1 and the first spend are reused, the body now spends twice.
      await rerunFrom({ store, target: "spent", from: "s2" });
      expect(await enter("spent", 2)).toMatchObject({ status: "completed", result: { turns: 2, tokens: 30 } });
      expect(await totals("spent")).toEqual({ turns: 2, tokens: 30 });
      // A replay (resume, no rerun) reuses every spend, and reads the same.
      expect(await enter("spent", 2)).toMatchObject({ status: "completed", result: { turns: 2, tokens: 30 } });
      await compact("spent");
      expect(await totals("spent")).toEqual({ turns: 2, tokens: 30 });
      // A rerun after the compaction, from the first step, whose body spends three times.
      await rerunFrom({ store, target: "spent", from: "s1" });
      await compact("spent");
      expect(await enter("spent", 3)).toMatchObject({ status: "completed", result: { turns: 3, tokens: 60 } });
      expect(await totals("spent")).toEqual({ turns: 3, tokens: 60 });
      await compact("spent");
      expect(await totals("spent")).toEqual({ turns: 3, tokens: 60 });
      // A fork at s5 copies what the current history holds before it, never the first run's spend after s3 (s4's);
      // run, it reads what its body spent.
      const fork = await forkRun({ store, target: "spent", at: "s5", id: "spent-fork" });
      expect(fork.copied).not.toContain("phasekit:budget#4");
      expect(await enter("spent-fork", 3)).toMatchObject({ status: "completed", result: { turns: 3, tokens: 60 } });
      expect(await totals("spent-fork")).toEqual({ turns: 3, tokens: 60 });
    } finally {
      await store.close();
    }
  });
}
