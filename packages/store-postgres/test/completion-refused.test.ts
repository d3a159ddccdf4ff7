/**
 * The step's durable statement (artifact + completed record) answers no row: its fence refuses by raising
 * FENCE_REFUSED (sql/009). Taken while its body ran (the holder's lease still fresh by its own clocks, so the
 * statement itself is the first to learn it), the step fails with LOCK_LOST and writes nothing: no step row, no
 * artifact row, no count for readers. Refused only because the lease ran out with nobody taking it, the write
 * is sent again once a renewal confirms the lease, and lands once.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { STEP_WRITES } from "../src/store/step-writes.js";
import { startCluster } from "./helpers/cluster.js";
import { storeSetup } from "./helpers/stores.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`postgres completion refused (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  // A long lease: no renewal runs during a test, so only the database's fence decides.
  const { open, admin, expire } = storeSetup(cluster, { leaseMs: 60_000 });
  // The holder's pool, counting the completion statements it sends.
  const pools: pg.Pool[] = [];
  afterAll(async () => Promise.all(pools.map((p) => p.end())));
  const counted = (): { pool: pg.Pool; completions: () => number } => {
    const pool = new pg.Pool({ connectionString: cluster.url, max: 4 });
    pools.push(pool);
    let n = 0;
    const send = pool.query.bind(pool) as (...args: unknown[]) => unknown;
    const completions = new Set<string>([STEP_WRITES.completed.name, STEP_WRITES.completedFresh.name]);
    (pool as { query: unknown }).query = (...args: unknown[]) => (completions.has((args[0] as { name?: string })?.name ?? "") && n++, send(...args));
    return { pool, completions: () => n };
  };
  // The step's `started` record, sent on the next turn of the event loop (the body did not end within its turn), has landed.
  const startedLanded = async (ns: string, step: string): Promise<void> => {
    for (;;) {
      const r = await admin.query("SELECT record->>'status' AS status FROM phasekit_steps WHERE namespace = $1 AND step_id = $2", [ns, step]);
      if (r.rows[0]?.status === "started") return;
    }
  };
  const rows = async (ns: string) => ({
    steps: (await admin.query("SELECT step_id, record->>'status' AS status FROM phasekit_steps WHERE namespace = $1 ORDER BY 1", [ns])).rows,
    artifacts: Number((await admin.query("SELECT count(*) AS n FROM phasekit_artifacts WHERE namespace = $1", [ns])).rows[0].n),
    writes: Number((await admin.query("SELECT coalesce(sum(writes), 0) AS n FROM phasekit_run_writes WHERE namespace = $1", [ns])).rows[0].n),
  });

  describe("postgres: the completion statement's fence", () => {
    it("the run taken while the body ran: LOCK_LOST, and nothing of the step is written or counted", async () => {
      const ns = `taken-${randomUUID()}`;
      const { pool, completions } = counted();
      const a = await open(ns, { pool });
      const b = await open(ns);
      const la = await a.lock("run", { owner: { tool: "a" } });
      if (!la.ok) throw la.error;
      const cps = await la.lock.store.checkpoints("run", { now: () => new Date() });
      await cps.step("first", {}, () => ({ n: 1 }));
      let lb: Awaited<ReturnType<typeof b.lock>> | undefined;
      await expect(
        cps.step("late", {}, async () => {
          await startedLanded(ns, "late");
          await expire(ns, "run");
          lb = await b.lock("run", { owner: { tool: "b" } });
          if (!lb.ok) throw lb.error;
          return { n: 2, text: "never stored" };
        }),
      ).rejects.toMatchObject({ code: "LOCK_LOST" });
      await a.close(); // sends every count still pending
      const after = await rows(ns);
      // The late step's `started` record, written while `a` held the run, stays as it was.
      expect(after.steps).toEqual([{ step_id: "first", status: "completed" }, { step_id: "late", status: "started" }]);
      expect(after.artifacts).toBe(1);
      // The first step and the late `started` record were counted; the refused completion was not.
      expect(after.writes).toBe(2);
      // Sent once: the renewal after the refusal found the run taken.
      expect(completions()).toBe(2);
      if (lb?.ok) await lb.lock.release();
    });

    it("the lease ran out with nobody taking it: the renewal confirms it and the write lands once", async () => {
      const ns = `expired-${randomUUID()}`;
      const { pool, completions } = counted();
      const a = await open(ns, { pool });
      const la = await a.lock("run", { owner: { tool: "a" } });
      if (!la.ok) throw la.error;
      const cps = await la.lock.store.checkpoints("run", { now: () => new Date() });
      const r = await cps.step("s", {}, async () => {
        await startedLanded(ns, "s");
        await expire(ns, "run");
        return { n: 1 };
      });
      expect(r).toMatchObject({ reused: false, output: { n: 1 } });
      await a.close();
      const after = await rows(ns);
      expect(after.steps).toEqual([{ step_id: "s", status: "completed" }]);
      expect(after.artifacts).toBe(1);
      // The `started` record and the completion, each counted once.
      expect(after.writes).toBe(2);
      // Refused (the lease ran out), then sent again once the renewal confirmed it.
      expect(completions()).toBe(2);
      await la.lock.release().catch(() => undefined);
    });
  });
}
