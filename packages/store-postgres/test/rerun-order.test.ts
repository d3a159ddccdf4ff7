/**
 * A rerun from a step marks it and every step the run first recorded after it, on PostgreSQL as on plan folders,
 * also when the step was run again later on its own (its latest attempt then started after the steps that
 * followed it the first time). Before sql/006 the store ordered steps by their latest attempt: a rerun from `a`
 * marked `a` only, and `b` and `c` were silently reused. A fork copies in the same order.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forkRun, rerunFrom, runWorkflow } from "@phasekit/adapters-pi";
import { openPostgresPlanStore, type PostgresPlanStore } from "../src/index.js";
import { startCluster } from "./helpers/cluster.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`rerun order on PostgreSQL (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const repoRoot = mkdtempSync(path.join(tmpdir(), "phasekit-pg-order-"));
  let store: PostgresPlanStore;
  beforeAll(async () => {
    store = await openPostgresPlanStore({ connectionString: cluster.url, namespace: `order-${randomUUID().slice(0, 8)}` });
  });
  afterAll(async () => {
    await store.close();
    cluster.destroy();
  });

  /** Runs `ids` in order on run `target` (input `v` for each), returning the ids whose step ran. */
  const run = async (target: string, ids: string[], v: number): Promise<string[]> => {
    const ran: string[] = [];
    const r = await runWorkflow({ repoRoot, target, toolName: "order", store, reenter: true }, async (ctx) => {
      for (const id of ids) await ctx.step(id, { v: id === "a" ? v : 1 }, () => void ran.push(id));
    });
    expect(r.status).toBe("completed");
    return ran;
  };

  describe("first-run order on PostgreSQL", () => {
    it("a rerun from a step run again on its own later marks the steps first recorded after it too", async () => {
      expect(await run("r1", ["a", "b", "c"], 1)).toEqual(["a", "b", "c"]);
      // `a` alone, with a new input: its latest attempt now starts after b's and c's.
      expect(await run("r1", ["a"], 2)).toEqual(["a"]);
      const marked = await rerunFrom({ store, target: "r1", from: "a" });
      expect(marked.keys).toEqual(["a", "b", "c"]);
      expect(await run("r1", ["a", "b", "c"], 2)).toEqual(["a", "b", "c"]);
    });

    it("records() and a fork follow the order the run first recorded its steps", async () => {
      expect(await run("f1", ["a", "b", "c"], 1)).toEqual(["a", "b", "c"]);
      expect(await run("f1", ["a"], 2)).toEqual(["a"]);
      const records = await (await store.checkpoints("f1", { now: () => new Date() })).records();
      expect(records.map((r) => r.stepId)).toEqual(["a", "b", "c"]);
      const fork = await forkRun({ store, target: "f1", at: "b" });
      expect(fork.copied).toEqual(["a"]);
    });
  });
}
