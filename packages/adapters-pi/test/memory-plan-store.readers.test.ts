/**
 * The memory store's readers never write: reading a run that does not exist leaves no run behind, so `list()`
 * does not show it and a fork with that id is not refused as "taken".
 */
import { runWorkflow, createReporter, forkRun } from "@phasekit/adapters-pi";
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { createMemoryPlanStore } from "./helpers/memory-plan-store.js";

describe("memory store readers", () => {
  it("reading an unknown run creates nothing: list() stays empty", async () => {
    const store = createMemoryPlanStore();
    expect(await store.readMetadata("ghost")).toEqual({ ok: true, metadata: null });
    expect((await store.readJournal("ghost")).ok).toBe(true);
    expect((await store.readControl("ghost")).ok).toBe(true);
    expect(await (await store.checkpoints("ghost", { now: () => new Date() })).records()).toEqual([]);
    expect((await store.requestControl("ghost", "stop")).ok).toBe(false);
    expect(await store.list()).toEqual([]);
  });

  it("forkRun({ store: memory, id }) takes a free id", async () => {
    const store = createMemoryPlanStore();
    const quiet = () => createReporter({ onChange: () => undefined });
    await runWorkflow({ repoRoot: tmpdir(), target: "src", toolName: "t", store, createReporter: quiet }, async (ctx) => {
      for (const k of ["a", "b", "c"]) await ctx.step(k, null, () => k);
      return "done";
    });
    const fork = await forkRun({ store, target: "src", at: "c", id: "f1" });
    expect(fork).toMatchObject({ slug: "f1", copied: ["a", "b"] });
    expect((await store.list()).map((e) => e.slug)).toEqual(["f1", "src"]);
  });
});
