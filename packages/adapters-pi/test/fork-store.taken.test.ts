/**
 * forkRun on a store (fork-store.ts) with an id: a run of that id created by someone else after the id was
 * checked and before the fork's lease (another process, the same `--id`) is never written into.
 */
import { createFsPlanStore, createReporter, forkRun, runWorkflow, type PlanStore } from "@phasekit/adapters-pi";
import { describe, expect, it } from "vitest";
import { useTempRepos } from "./helpers/temp-repos.js";

const repo = useTempRepos("pk-fork-taken-");
const quiet = () => createReporter({ onChange: () => undefined });

describe("forkRun({ store, id }) against a run created meanwhile", () => {
  it("refuses the taken id under its lease and writes nothing into that run", async () => {
    const root = repo();
    await runWorkflow({ repoRoot: root, target: "src", toolName: "t", createReporter: quiet }, async (ctx) => {
      for (const k of ["a", "b", "c"]) await ctx.step(k, null, () => k);
      return "done";
    });
    const store = createFsPlanStore({ repoRoot: root });
    try {
      // Someone else creates run "f1" (one step recorded) between the fork's id check and its lock.
      const racing: PlanStore = {
        ...store,
        lock: async (slug, options) => {
          if (slug === "f1") await runWorkflow({ repoRoot: root, target: "f1", toolName: "other", createReporter: quiet }, async (ctx) => ctx.step("mine", null, () => 1));
          return store.lock(slug, options);
        },
      };
      const refused = await forkRun({ store: racing, target: "src", at: "c", id: "f1" }).then(() => null, (e: unknown) => e);
      // Before: the fork's steps a and b were recorded in f1's history (then its metadata write failed).
      const other = await store.lock("f1", { owner: { tool: "t" }, retries: 0 });
      if (!other.ok) throw other.error;
      const records = await (await (other.lock.store ?? store).checkpoints("f1", { now: () => new Date() })).records();
      await other.lock.release();
      expect(records.map((r) => r.stepId).filter((k) => !k.startsWith("phasekit:"))).toEqual(["mine"]);
      expect(refused).toMatchObject({ code: "INVALID_OPTIONS", details: { field: "id", value: "f1" } });
    } finally {
      await store.close();
    }
  });
});
