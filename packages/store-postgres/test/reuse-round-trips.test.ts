/**
 * What a reused step costs on PostgreSQL, counted (not timed): every statement the store sends goes through the
 * pool's `query`, which this test wraps. runWorkflow asks `record(key)` (the attempt cap) and then `step(key)`
 * for every step; together they take one round trip per hit while the run's step index is still loading (a slow
 * index load is held back by the test), and once it is in, one read takes the outputs of the next READ_AHEAD
 * steps too, so the hits that follow read nothing; a new step reads nothing either.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import type { CheckpointStore } from "@phasekit/adapters-pi";
import { openPostgresPlanStore, type PostgresPlanStore } from "../src/index.js";
import { READ_AHEAD } from "../src/store/step-index.js";
import { startCluster } from "./helpers/cluster.js";
import { countingPool, isIndexLoad } from "./helpers/counting-pool.js";

const started = startCluster();

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
    return { counted, holder: again.lock.store, namespace };
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

    it("opening a holder's checkpoints and reusing its first step load no step index; reading a second step on its own starts the load", async () => {
      const { counted, holder } = await resumed(40);
      const at = counted.texts.length;
      const cps = await holder.checkpoints("run", { now: () => new Date() });
      expect(await replay(cps, 0)).toMatchObject({ reused: true, output: { i: 0 } });
      // One statement: the first step's record and output, read on their own.
      expect(counted.texts.slice(at)).toHaveLength(1);
      expect(counted.texts.slice(at).filter(isIndexLoad)).toHaveLength(0);
      expect(await replay(cps, 1)).toMatchObject({ reused: true, output: { i: 1 } });
      expect(counted.texts.slice(at).filter(isIndexLoad).length).toBeGreaterThan(0);
      expect(await cps.records()).toHaveLength(40);
    });

    it("once the index is loaded, one read per READ_AHEAD + 1 hits, and none to decide that a step is new", async () => {
      const n = 2 * (READ_AHEAD + 1) + 3;
      const { counted, holder } = await resumed(n);
      const cps = await holder.checkpoints("run", { now: () => new Date() });
      expect(await cps.records()).toHaveLength(n); // waits for the index
      const at = counted.texts.length;
      for (let i = 0; i < n; i++) expect(await replay(cps, i)).toMatchObject({ reused: true, output: { i } });
      expect(counted.texts.length - at).toBe(3);
      // A new step: nothing is read first; its body ends within its turn, so only its completion (with its output)
      // is written (a fresh lease needs no `started` record acknowledged first: docs/postgres.md).
      const miss = counted.texts.length;
      await cps.record("new");
      expect(await cps.step("new", {}, () => "fresh")).toMatchObject({ reused: false, reason: "no-record" });
      expect(counted.texts.slice(miss).every((t) => /INSERT INTO phasekit_steps/.test(t))).toBe(true);
      expect(counted.texts.length - miss).toBe(1);
    });

    it("a lease's checkpoints are opened once: asking for them again (the pi extension does at every turn end) loads the step index once and shares what was written", async () => {
      const { counted, holder } = await resumed(5);
      const at = counted.texts.length;
      const first = await holder.checkpoints("run", { now: () => new Date() });
      await first.records();
      // One load (its statements: the steps and the commits).
      const oneLoad = counted.texts.slice(at).filter(isIndexLoad).length;
      expect(oneLoad).toBeGreaterThan(0);
      for (let i = 0; i < 4; i++) {
        const again = await holder.checkpoints("run", { now: () => new Date() });
        expect(await again.records()).toHaveLength(5 + i);
        await again.step(`more${i}`, {}, () => i);
      }
      expect(counted.texts.slice(at).filter(isIndexLoad)).toHaveLength(oneLoad);
      expect((await first.records()).map((r) => r.stepId)).toContain("more3");
    });

    it("an output read ahead is still checked against its address, and a body that replays out of order gets the right outputs", async () => {
      const { holder, namespace } = await resumed(10);
      const cps = await holder.checkpoints("run", { now: () => new Date() });
      await cps.records();
      // s6's output is edited by hand before the first hit reads it ahead.
      const admin = new pg.Pool({ connectionString: cluster.url, max: 1 });
      pools.push(admin);
      const edited = await admin.query("UPDATE phasekit_artifacts SET body = '{\"i\":666}' WHERE namespace = $1 AND fingerprint = $2", [namespace, (await cps.record("s6"))?.outputFingerprint]);
      expect(edited.rowCount).toBe(1);
      for (const i of [0, 5, 3, 2, 4, 1]) expect(await replay(cps, i)).toMatchObject({ reused: true, output: { i } });
      expect(await cps.step("s6", { i: 6 }, () => "ran again")).toMatchObject({ reused: false, reason: "artifact-corrupt", output: "ran again" });
      expect(await cps.step("s6", { i: 6 }, () => "not again")).toMatchObject({ reused: true, output: "ran again" });
      // s7…s9 are stored as deltas on s6's output (output-chain.ts): their chain passes the edited row, so
      // their materialized values do not hash to their fingerprints and they rerun too, never a wrong output.
      for (const i of [9, 7]) expect(await cps.step(`s${i}`, { i }, () => "rerun")).toMatchObject({ reused: false, reason: "artifact-corrupt", output: "rerun" });
    });

    it("decides from what it wrote itself when the index arrives after its own writes", async () => {
      const { counted, holder } = await resumed(3);
      counted.holdIndexLoads();
      const cps = await holder.checkpoints("run", { now: () => new Date() });
      // Two steps read on their own start the index load (held).
      await cps.record("s0");
      await cps.record("s2");
      expect(counted.texts.filter(isIndexLoad).length).toBeGreaterThan(0);
      // s1 is rerun with a new input while the index (which still says "s1 completed with input 1") is held.
      expect(await cps.step("s1", { i: "changed" }, () => "changed")).toMatchObject({ reused: false, reason: "input-changed" });
      counted.release();
      expect((await cps.records()).find((r) => r.stepId === "s1")).toMatchObject({ status: "completed", attempt: 1 });
      expect(await cps.step("s1", { i: "changed" }, () => "ran again")).toMatchObject({ reused: true, output: "changed" });
      expect(await cps.step("s1", { i: 1 }, () => "back")).toMatchObject({ reused: false, reason: "input-changed", output: "back" });
    });
  });
}
