/**
 * What a step miss sends on PostgreSQL, counted (not timed): every statement goes through the pool's `query`,
 * which this test wraps. On a fresh lease the body starts at once; its `started` record goes out on the event
 * loop's next turn unless the step has ended by then, so a body that ends within its first turn costs one
 * statement (the durable completion, which carries the attempt), and a body that takes longer is seen `started`
 * by readers while it runs. A holder whose lease is not fresh still has `started` acknowledged before the body.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it, vi } from "vitest";
import { sampleMetadata } from "../../adapters-pi/test/helpers/metadata-fixtures.js";
import { openPostgresPlanStore, type PostgresPlanStore } from "../src/index.js";
import { STEP_WRITES } from "../src/store/step-writes.js";
import { startCluster } from "./helpers/cluster.js";
import { countingPool } from "./helpers/counting-pool.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`postgres miss statements (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const stores: PostgresPlanStore[] = [];
  const pools: pg.Pool[] = [];
  const admin = new pg.Pool({ connectionString: cluster.url, max: 1 });
  afterAll(async () => {
    for (const s of stores) await s.close();
    for (const p of pools) await p.end();
    await admin.end();
    cluster.destroy();
  });

  /** A held run on a counting pool; `stepWrites()` names the step writes it sent, in order. */
  const held = async () => {
    const { pool, sent: statements } = countingPool(cluster.url);
    pools.push(pool);
    const namespace = `ms-${randomUUID()}`;
    const store = await openPostgresPlanStore({ pool, namespace });
    stores.push(store);
    const l = await store.lock("run", { owner: { tool: "t" } });
    if (!l.ok) throw l.error;
    await l.lock.store.writeMetadata("run", sampleMetadata("run", 0), null);
    const cps = await l.lock.store.checkpoints("run", { now: () => new Date() });
    const status = async (step: string) =>
      (await admin.query<{ s: string }>("SELECT record->>'status' AS s FROM phasekit_steps WHERE namespace = $1 AND slug = 'run' AND step_id = $2", [namespace, step])).rows[0]?.s;
    const stepWrites = () => statements.flatMap((s) => (s.name?.startsWith("phasekit_put_step_") ? [s.name] : []));
    return { cps, stepWrites, status, pool };
  };

  describe("a step miss on a fresh lease", () => {
    it("whose body ends within its first turn sends one statement: the completion, with the attempt", async () => {
      const { cps, stepWrites, status } = await held();
      await cps.step("sync", {}, () => ({ v: 1 }));
      await cps.step("microtask", {}, async () => ({ v: await Promise.resolve(2) }));
      // Neither step had a row: the record goes in with a plain INSERT, not the upsert.
      expect(stepWrites()).toEqual([STEP_WRITES.completedFresh.name, STEP_WRITES.completedFresh.name]);
      expect(await status("sync")).toBe("completed");
      expect(await cps.record("sync")).toMatchObject({ status: "completed", attempt: 1 });
    });

    it("of a step that has a row (a rerun on a new input) sends the upsert", async () => {
      const { cps, stepWrites, status } = await held();
      await cps.step("r", { a: 1 }, () => ({ v: 1 }));
      expect(await cps.step("r", { a: 2 }, () => ({ v: 2 }))).toMatchObject({ reused: false, reason: "input-changed", output: { v: 2 } });
      expect(stepWrites()).toEqual([STEP_WRITES.completedFresh.name, STEP_WRITES.completed.name]);
      expect(await status("r")).toBe("completed");
    });

    it("whose plain INSERT landed but whose reply was lost (the connection cut): sent again, it meets its own row and the upsert lands it", async () => {
      const { cps, stepWrites, status, pool } = await held();
      // The first completion commits, then its connection is reported cut, as when the server went away after the commit.
      const send = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
      let cut = true;
      (pool as { query: unknown }).query = async (...args: unknown[]) => {
        const r = await send(...args);
        if (cut && (args[0] as { name?: string })?.name === STEP_WRITES.completedFresh.name) {
          cut = false;
          throw Object.assign(new Error("Connection terminated unexpectedly"), { code: "57P01" });
        }
        return r;
      };
      expect(await cps.step("cut", {}, () => ({ v: 1 }))).toMatchObject({ reused: false, output: { v: 1 } });
      expect(stepWrites()).toEqual([STEP_WRITES.completedFresh.name, STEP_WRITES.completedFresh.name, STEP_WRITES.completed.name]);
      expect(await status("cut")).toBe("completed");
    });

    it("of a step whose row was written by hand after the index loaded: the plain INSERT meets it, the upsert replaces it", async () => {
      const { cps, stepWrites, status } = await held();
      await cps.records(); // the step index is loaded: "hand" has no row in it
      const ns = (await admin.query<{ namespace: string }>("SELECT namespace FROM phasekit_runs WHERE slug = 'run' ORDER BY written_at DESC NULLS LAST LIMIT 1")).rows[0]!.namespace;
      const epoch = (await admin.query<{ epoch: string }>("SELECT epoch FROM phasekit_runs WHERE namespace = $1 AND slug = 'run'", [ns])).rows[0]!.epoch;
      await admin.query("INSERT INTO phasekit_steps (namespace, slug, step_id, record, epoch, first_started) VALUES ($1, 'run', 'hand', $2, $3, '2026-01-01T00:00:00.000Z')", [
        ns,
        { v: 1, kind: "step", stepId: "hand", status: "started", attempt: 1, inputFingerprint: `v1:sha256:${"0".repeat(64)}`, startedAt: "2026-01-01T00:00:00.000Z" },
        epoch,
      ]);
      expect(await cps.step("hand", {}, () => ({ v: 1 }))).toMatchObject({ reused: false, output: { v: 1 } });
      expect(stepWrites()).toEqual([STEP_WRITES.completedFresh.name, STEP_WRITES.completed.name]);
      expect(await status("hand")).toBe("completed");
    });

    it("whose body takes longer is `started` for readers while it runs, and its end waits for that record", async () => {
      const { cps, stepWrites, status } = await held();
      let letGo!: () => void;
      const gate = new Promise<void>((r) => (letGo = r));
      const step = cps.step("slow", {}, async () => (await gate, { v: 1 }));
      await vi.waitFor(async () => expect(await status("slow")).toBe("started"), { timeout: 30_000, interval: 10 });
      letGo();
      await step;
      expect(stepWrites()).toEqual([STEP_WRITES.started.name, STEP_WRITES.completed.name]);
      expect(await status("slow")).toBe("completed");
    });

    it("whose body fails records the failure, the `started` record never replacing it", async () => {
      const { cps, status } = await held();
      await expect(cps.step("boom", {}, () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
      const slow = async () => {
        await new Promise((r) => setImmediate(r));
        throw new Error("late boom");
      };
      await expect(cps.step("late", {}, slow)).rejects.toThrow("late boom");
      expect(await status("boom")).toBe("failed");
      expect(await status("late")).toBe("failed");
      expect(await cps.record("late")).toMatchObject({ status: "failed", attempt: 1, error: expect.stringContaining("late boom") });
    });

    it("whose output is already stored (the same content) leaves that row as it was: not rewritten, not locked", async () => {
      const { cps } = await held();
      const first = await cps.step("one", {}, () => ({ same: "content" }));
      const row = async () =>
        (await admin.query<{ xmin: string; xmax: string }>("SELECT xmin::text, xmax::text FROM phasekit_artifacts WHERE fingerprint = $1", [first.record.outputFingerprint])).rows;
      const before = await row();
      expect(before).toHaveLength(1);
      await cps.step("two", {}, () => ({ same: "content" }));
      expect(await cps.record("two")).toMatchObject({ status: "completed", outputFingerprint: first.record.outputFingerprint });
      // A conflict that updates nothing still took a row lock (xmax set, a WAL record); DO NOTHING takes none.
      expect(await row()).toEqual(before);
      expect(before[0]?.xmax).toBe("0");
    });
  });
}
