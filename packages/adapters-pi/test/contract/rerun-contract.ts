/**
 * Time travel in place, as every backend must keep it (part of the history contract, run on fs, memory and
 * PostgreSQL): a run that ends without reaching the steps a rerun marked spends their marks (engine/rerun-spent.ts),
 * and a rerun follows the order the run first recorded its steps in, a compaction notwithstanding.
 */
import { expect, it } from "vitest";
import { runWorkflow, createReporter, rerunFrom, type PlanStore, type RunContext } from "@phasekit/adapters-pi";

/** The cases, inside the history contract's describe; `open` returns an empty store, `repoRoot` a fresh folder. */
export function rerunContractCases(open: () => Promise<PlanStore>, repoRoot: () => string): void {
  it("a run that ends after a rerun without reaching the marked steps spends their marks: no longer pending, yet a later re-entry still runs them", async () => {
    const store = await open();
    try {
      const root = repoRoot();
      const effects = new Map<string, number>();
      const bodyOf =
        (slug: string, steps: readonly string[], fail: boolean) =>
        async (ctx: RunContext): Promise<string[]> => {
          const out: string[] = [];
          for (const s of steps) {
            const k = `${slug}/${s}`;
            out.push(await ctx.step(s, { s }, () => (effects.set(k, (effects.get(k) ?? 0) + 1), `${s}${effects.get(k)}`)));
          }
          if (fail) throw new Error("the body failed after its steps");
          return out;
        };
      const enter = (slug: string, steps: readonly string[], fail = false) =>
        runWorkflow({ repoRoot: root, target: slug, toolName: "history-contract", store, reenter: true, createReporter: () => createReporter({ onChange: () => undefined }), onError: () => undefined }, bodyOf(slug, steps, fail)).catch((e: unknown) => e as Error);
      const flags = async (slug: string) => (await (await store.checkpoints(slug, { now: () => new Date() })).records()).map((r) => [r.stepId, r.superseded ?? false, r.rerunSpent ?? false]);
      const gcReason = async (slug: string) => {
        const r = await store.gc({ keep: 0, now: () => new Date(), dryRun: true });
        return [...r.kept, ...r.removed].find((e) => e.slug === slug)?.reason;
      };
      for (const slug of ["shrunk", "failed"]) {
        expect(await enter(slug, ["a", "b", "c"])).toMatchObject({ status: "completed" });
        await rerunFrom({ store, target: slug, from: "b" });
        expect(await gcReason(slug)).toBe("rerun-pending");
      }
      // The body no longer reaches b or c: the run completes, and nothing in it will ever carry out their rerun.
      expect(await enter("shrunk", ["a"])).toMatchObject({ status: "completed", result: ["a1"] });
      expect(await flags("shrunk")).toEqual([["a", false, false], ["b", true, true], ["c", true, true]]);
      expect(await gcReason("shrunk")).toBe("beyond-keep");
      // A failed run ends too; its marks are spent as well (a resume that reaches b still runs it: below).
      expect(await enter("failed", ["a"], true)).toMatchObject({ message: "the body failed after its steps" });
      expect(await flags("failed")).toEqual([["a", false, false], ["b", true, true], ["c", true, true]]);
      expect(await gcReason("failed")).toBe("beyond-keep");
      // Spent is not reusable: the records stay superseded, so a re-entry that reaches them runs them again.
      expect(await enter("shrunk", ["a", "b"])).toMatchObject({ status: "completed", result: ["a1", "b2"] });
      expect(await flags("shrunk")).toEqual([["a", false, false], ["b", false, false], ["c", true, true]]);
      // A new rerun makes the run pending again, whatever was spent before.
      await rerunFrom({ store, target: "shrunk", from: "b" });
      expect(await flags("shrunk")).toEqual([["a", false, false], ["b", true, false], ["c", true, false]]);
      expect(await gcReason("shrunk")).toBe("rerun-pending");
    } finally {
      await store.close();
    }
  });

  it("a rerun after a compaction follows the order the run first recorded its steps in, not the order they last ran", async () => {
    const store = await open();
    try {
      const root = repoRoot();
      const enter = (input: number) =>
        runWorkflow({ repoRoot: root, target: "order", toolName: "history-contract", store, reenter: true, createReporter: () => createReporter({ onChange: () => undefined }) }, async (ctx) => {
          for (const s of ["a", "b", "c"]) await ctx.step(s, { s, input: s === "a" ? input : 0 }, () => s);
        });
      await enter(1);
      await enter(2); // a runs again: its latest record is now the newest of the run
      const lock = await store.lock("order", { owner: { tool: "compactor" } });
      if (!lock.ok) throw lock.error;
      try {
        await (await (lock.lock.store ?? store).checkpoints("order", { now: () => new Date() })).compact();
      } finally {
        await lock.lock.release();
      }
      expect((await (await store.checkpoints("order", { now: () => new Date() })).records()).map((r) => r.stepId)).toEqual(["a", "b", "c"]);
      expect(await rerunFrom({ store, target: "order", from: "b" })).toMatchObject({ keys: ["b", "c"] });
    } finally {
      await store.close();
    }
  });
}
