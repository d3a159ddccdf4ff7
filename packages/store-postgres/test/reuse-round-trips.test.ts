/**
 * What a reused step costs on PostgreSQL, counted (not timed): every statement the store sends goes through the
 * pool's `query`, which this test wraps. runWorkflow asks `record(key)` (the attempt cap) and then `step(key)`
 * for every step; together they take one round trip per hit, whether the run's step index has been loaded yet
 * (a slow index load is held back by the test) or not, and a new step reads nothing once the index is in.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import type { CheckpointStore } from "@phasekit/adapters-pi";
import { openPostgresPlanStore, type PostgresPlanStore } from "../src/index.js";
import { startCluster } from "./helpers/cluster.js";

const started = startCluster();

/** A pool whose `query` calls are counted, and whose step-index loads can be held back until `release()`. */
function countingPool(url: string) {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  const texts: string[] = [];
  let gate: Promise<void> | null = null;
  let open = (): void => undefined;
  const original = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  (pool as { query: unknown }).query = async (...args: unknown[]) => {
    const first = args[0] as string | { text: string };
    const text = typeof first === "string" ? first : first.text;
    texts.push(text);
    // The index load is the one statement that reads every step record of the run at once.
    if (gate !== null && /FROM phasekit_steps WHERE namespace = \$1 AND slug = \$2(?! AND)/.test(text)) await gate;
    return original(...args);
  };
  return {
    pool,
    texts,
    holdIndexLoads(): void {
      gate = new Promise((r) => (open = r));
    },
    release(): void {
      open();
      gate = null;
    },
  };
}

if (!started.ok) {
  describe.skip(`postgres reuse round trips (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const stores: PostgresPlanStore[] = [];
  const pools: pg.Pool[] = [];
  afterAll(async () => {
    for (const s of stores) await s.close();
    for (const p of pools) await p.end();
    cluster.destroy();
  });

  /** A run of `n` completed steps `s0…`, then a fresh lease on it with a counting pool. */
  const resumed = async (n: number) => {
    const namespace = `rt-${randomUUID()}`;
    const counted = countingPool(cluster.url);
    pools.push(counted.pool);
    const store = await openPostgresPlanStore({ pool: counted.pool, namespace, leaseMs: 60_000 });
    stores.push(store);
    const first = await store.lock("run", { owner: { tool: "rt" } });
    if (!first.ok) throw first.error;
    const cps = await first.lock.store.checkpoints("run", { now: () => new Date() });
    for (let i = 0; i < n; i++) await cps.step(`s${i}`, { i }, () => ({ i, text: "x".repeat(100) }));
    await first.lock.release();
    const again = await store.lock("run", { owner: { tool: "rt" } });
    if (!again.ok) throw again.error;
    return { counted, holder: again.lock.store };
  };
  /** What runWorkflow does per step: the attempt cap's record(), then step(). */
  const replay = async (cps: CheckpointStore, i: number) => {
    await cps.record(`s${i}`);
    return cps.step(`s${i}`, { i }, () => {
      throw new Error(`step s${i} ran again`);
    });
  };

  describe("postgres reuse hit: round trips", () => {
    it("one round trip per hit while the run's step index is still loading", async () => {
      const { counted, holder } = await resumed(12);
      counted.holdIndexLoads();
      const cps = await holder.checkpoints("run", { now: () => new Date() });
      const before = counted.texts.length;
      for (let i = 0; i < 10; i++) {
        const at = counted.texts.length;
        const r = await replay(cps, i);
        expect(r).toMatchObject({ reused: true, output: { i } });
        // The held index load may be among them (it was sent, it waits for the gate); the rest is one per hit.
        expect(counted.texts.slice(at).filter((t) => !isIndexLoad(t))).toHaveLength(1);
      }
      expect(counted.texts.slice(before).filter((t) => !isIndexLoad(t))).toHaveLength(10);
      counted.release();
    });

    it("one round trip per hit once the index is loaded, and none to decide that a step is new", async () => {
      const { counted, holder } = await resumed(12);
      const cps = await holder.checkpoints("run", { now: () => new Date() });
      expect(await cps.records()).toHaveLength(12); // waits for the index
      const at = counted.texts.length;
      for (let i = 0; i < 12; i++) expect(await replay(cps, i)).toMatchObject({ reused: true, output: { i } });
      expect(counted.texts.length - at).toBe(12);
      // A new step: its records are written (started, then completed with its output); nothing is read first.
      const miss = counted.texts.length;
      await cps.record("new");
      expect(await cps.step("new", {}, () => "fresh")).toMatchObject({ reused: false, reason: "no-record" });
      expect(counted.texts.slice(miss).every((t) => /INSERT INTO phasekit_steps/.test(t))).toBe(true);
      expect(counted.texts.length - miss).toBe(2);
    });

    it("decides from what it wrote itself when the index arrives after its own writes", async () => {
      const { counted, holder } = await resumed(3);
      counted.holdIndexLoads();
      const cps = await holder.checkpoints("run", { now: () => new Date() });
      // s1 is rerun with a new input while the index (which still says "s1 completed with input 1") is held.
      expect(await cps.step("s1", { i: "changed" }, () => "changed")).toMatchObject({ reused: false, reason: "input-changed" });
      counted.release();
      expect((await cps.records()).find((r) => r.stepId === "s1")).toMatchObject({ status: "completed", attempt: 1 });
      expect(await cps.step("s1", { i: "changed" }, () => "ran again")).toMatchObject({ reused: true, output: "changed" });
      expect(await cps.step("s1", { i: 1 }, () => "back")).toMatchObject({ reused: false, reason: "input-changed", output: "back" });
    });
  });
}

function isIndexLoad(text: string): boolean {
  return /FROM phasekit_(steps|commits) WHERE namespace = \$1 AND slug = \$2(?! AND)/.test(text);
}
