/**
 * The plain INSERT of a step known to have no row (completedFresh), when another holder took the run and wrote
 * that very step after this holder's index was loaded: the fence is read before the row is inserted, so the
 * statement is refused (FENCE_REFUSED, then LOCK_LOST once the renewal finds the run taken), never a unique
 * violation whose fallback upsert could replace the new holder's row.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { STEP_WRITES } from "../src/store/step-writes.js";
import { startCluster } from "./helpers/cluster.js";
import { storeSetup } from "./helpers/stores.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`postgres fresh insert, run taken (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  // A long lease: no renewal runs during the test, so the holder's clocks still count it fresh when it was taken.
  const { open, admin, expire } = storeSetup(cluster, { leaseMs: 60_000 });
  const pools: pg.Pool[] = [];
  afterAll(async () => Promise.all(pools.map((p) => p.end())));

  describe("postgres: completedFresh after a takeover", () => {
    it("the new holder wrote the step after the old one's index loaded: LOCK_LOST, the new holder's row kept, nothing counted", async () => {
      const ns = `fresh-taken-${randomUUID()}`;
      const pool = new pg.Pool({ connectionString: cluster.url, max: 4 });
      pools.push(pool);
      const sent: string[] = [];
      const send = pool.query.bind(pool) as (...args: unknown[]) => unknown;
      (pool as { query: unknown }).query = (...args: unknown[]) => (sent.push((args[0] as { name?: string })?.name ?? ""), send(...args));
      const a = await open(ns, { pool });
      const b = await open(ns);
      const la = await a.lock("run", { owner: { tool: "a" } });
      if (!la.ok) throw la.error;
      const cps = await la.lock.store.checkpoints("run", { now: () => new Date() });
      // The index is in (a hit or miss after the load decides from it): "late" is known to have no row.
      await cps.step("first", {}, () => ({ n: 1 }));
      await cps.records();
      await expire(ns, "run");
      const lb = await b.lock("run", { owner: { tool: "b" } });
      if (!lb.ok) throw lb.error;
      const cpb = await lb.lock.store.checkpoints("run", { now: () => new Date() });
      await cpb.step("late", {}, () => ({ by: "b" }));
      const before = (await admin.query("SELECT record::text AS r, epoch FROM phasekit_steps WHERE namespace = $1 AND step_id = 'late'", [ns])).rows;
      sent.length = 0;
      await expect(cps.step("late", {}, () => ({ by: "a" }))).rejects.toMatchObject({ code: "LOCK_LOST" });
      // The path under test: the plain INSERT, sent (and refused) with no upsert after it.
      expect(sent.filter((n) => n === STEP_WRITES.completedFresh.name).length).toBeGreaterThanOrEqual(1);
      expect(sent).not.toContain(STEP_WRITES.completed.name);
      await a.close();
      expect((await admin.query("SELECT record::text AS r, epoch FROM phasekit_steps WHERE namespace = $1 AND step_id = 'late'", [ns])).rows).toEqual(before);
      await lb.lock.release();
      await b.close(); // both stores' counts sent: "first" by a, "late" by b; a's refused write not counted
      expect(Number((await admin.query("SELECT coalesce(sum(writes), 0) AS n FROM phasekit_run_writes WHERE namespace = $1", [ns])).rows[0].n)).toBe(2);
    });
  });
}
