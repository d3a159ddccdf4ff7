/** Fencing, migrations and control requests against a real server, in one process with separate pools. */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { sampleMetadata } from "../../adapters-pi/test/helpers/metadata-fixtures.js";
import { migrate, MIGRATIONS, openPostgresPlanStore, SCHEMA_VERSION } from "../src/index.js";
import { STEP_WRITES } from "../src/store/step-writes.js";
import { startCluster } from "./helpers/cluster.js";
import { storeSetup } from "./helpers/stores.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`postgres fencing (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  // A 10 s lease: its heartbeat is slow, so a lease runs out when expire says so, without waiting.
  const { open, admin, expire } = storeSetup(cluster, { leaseMs: 10_000 });
  const snapshot = async (namespace: string) => {
    const q = (t: string) => admin.query(`SELECT * FROM ${t} WHERE namespace = $1 ORDER BY 1, 2, 3`, [namespace]).then((r) => r.rows);
    return { runs: (await q("phasekit_runs")).map(({ lease_until: _l, ...rest }) => rest), journal: await q("phasekit_journal"), steps: await q("phasekit_steps"), commits: await q("phasekit_commits"), artifacts: await q("phasekit_artifacts") };
  };

  describe("postgres store fencing", () => {
    it("refuses every kind of write from a displaced epoch, leaving the new holder's state untouched", async () => {
      const ns = `f-${randomUUID()}`;
      const a = await open(ns);
      const b = await open(ns);
      const la = await a.lock("run", { owner: { tool: "a" } });
      if (!la.ok) throw la.error;
      const w1 = await a.writeMetadata("run", sampleMetadata("run", 0), null);
      expect(w1.ok).toBe(true);
      const cpsA = await a.checkpoints("run", { now: () => new Date() });
      await cpsA.step("s0", { n: 0 }, () => ({ by: "a" }));
      await cpsA.recordCommitIntent({ id: "c1", message: "m", files: [] });
      // A's step index is in before the takeover (it loads once a second step is read on its own, or when all is
      // asked for): A then decides s1 from what it knew, a miss, and its write is what the fence must refuse.
      await cpsA.records();
      await expire(ns, "run");
      const lb = await b.lock("run", { owner: { tool: "b" } });
      if (!lb.ok) throw lb.error;
      expect(await b.writeMetadata("run", sampleMetadata("run", 1), 1)).toMatchObject({ ok: true });
      const cpsB = await b.checkpoints("run", { now: () => new Date() });
      expect(await cpsB.step("s0", { n: 0 }, () => ({ by: "b" }))).toMatchObject({ reused: true, output: { by: "a" } });
      await cpsB.step("s1", { n: 1 }, () => ({ by: "b" }));
      const stop = await b.requestControl("run", "stop", { reason: "filed while b holds" });
      if (!stop.ok) throw stop.error;
      const before = await snapshot(ns);
      // Every write A can make, each refused in its own statement by the database.
      expect(await a.writeMetadata("run", sampleMetadata("run", 9), 2)).toMatchObject({ ok: false, error: { code: "LOCK_LOST" } });
      // With the generation it last saw, the displaced holder still hears LOCK_LOST, not a stale generation.
      expect(await a.writeMetadata("run", sampleMetadata("run", 9), 1)).toMatchObject({ ok: false, error: { code: "LOCK_LOST" } });
      expect(await a.appendJournal("run", { generation: 2, at: "2026-01-01T00:00:00.000Z", event: "late" })).toMatchObject({ ok: false, error: { code: "LOCK_LOST" } });
      await expect(cpsA.step("s1", { n: 1 }, () => ({ by: "a" }))).rejects.toMatchObject({ code: "LOCK_LOST" });
      await expect(cpsA.step("s2", { n: 2 }, () => ({ by: "a" }))).rejects.toMatchObject({ code: "LOCK_LOST" });
      await expect(cpsA.markCommitted("c1", { sha: "abc1234" })).rejects.toMatchObject({ code: "LOCK_LOST" });
      expect(await cpsA.compact().then(() => "ran", (e: { code: string }) => e.code)).toBe("LOCK_LOST");
      expect(await a.clearControl("run", stop.request)).toMatchObject({ ok: false, error: { code: "LOCK_LOST" } });
      expect(await b.readControl("run")).toEqual({ ok: true, request: stop.request });
      expect(await la.lock.release()).toEqual({ ok: true, released: false });
      // Even after the new holder lets go, the displaced lease is still refused (it never falls back to "no holder").
      expect(await lb.lock.release()).toEqual({ ok: true, released: true });
      expect(await la.lock.store.writeMetadata("run", sampleMetadata("run", 9), 2)).toMatchObject({ ok: false, error: { code: "LOCK_LOST" } });
      await expect(cpsA.step("s3", { n: 3 }, () => ({ by: "a" }))).rejects.toMatchObject({ code: "LOCK_LOST" });
      const after = await snapshot(ns);
      expect({ ...after, runs: after.runs.map((r) => ({ ...r, holder: "x", holder_owner: "x" })) }).toEqual({ ...before, runs: before.runs.map((r) => ({ ...r, holder: "x", holder_owner: "x" })) });
    });

    it("a writer holding no lease is refused while another holds the run (LOCKED), not merely generation-checked", async () => {
      const ns = `g-${randomUUID()}`;
      const a = await open(ns);
      const b = await open(ns);
      await b.writeMetadata("run", sampleMetadata("run", 0), null);
      const la = await a.lock("run", { owner: { tool: "a" } });
      if (!la.ok) throw la.error;
      expect(await b.writeMetadata("run", sampleMetadata("run", 1), 1)).toMatchObject({ ok: false, error: { code: "LOCKED" } });
      expect(await a.writeMetadata("run", sampleMetadata("run", 1), 1)).toMatchObject({ ok: true });
      await la.lock.release();
    });

    it("aborts the holder's signal with LOCK_LOST when its lease is taken", async () => {
      const ns = `h-${randomUUID()}`;
      const a = await open(ns, { leaseMs: 300 });
      const b = await open(ns, { leaseMs: 300 });
      const la = await a.lock("run", { owner: { tool: "a" } });
      if (!la.ok) throw la.error;
      await expire(ns, "run");
      const lb = await b.lock("run", { owner: { tool: "b" } });
      expect(lb.ok).toBe(true);
      await new Promise((r) => la.lock.signal.addEventListener("abort", r, { once: true }));
      expect(la.lock.signal.reason).toMatchObject({ code: "LOCK_LOST" });
      await expect(la.lock.assertHeld()).rejects.toMatchObject({ code: "LOCK_LOST" });
      if (lb.ok) await lb.lock.release();
    });

    it("applies migrations once when many processes start at once, and again as a no-op", async () => {
      const db = `mig_${randomUUID().replaceAll("-", "")}`;
      await admin.query(`CREATE DATABASE ${db}`);
      const url = cluster.url.replace(/\/phasekit$/, `/${db}`);
      const pools = Array.from({ length: 6 }, () => new pg.Pool({ connectionString: url, max: 1 }));
      try {
        const reports = await Promise.all(pools.map((p) => migrate(p)));
        expect(reports.filter((r) => r.applied.length > 0)).toEqual([{ applied: MIGRATIONS.map((m) => m.version), version: SCHEMA_VERSION }]);
        expect(reports.every((r) => r.version === SCHEMA_VERSION)).toBe(true);
        expect(await migrate(pools[0]!)).toEqual({ applied: [], version: SCHEMA_VERSION });
      } finally {
        for (const p of pools) await p.end();
      }
    });

    it("files control requests from any machine; only the holder clears them", async () => {
      const ns = `c-${randomUUID()}`;
      const holder = await open(ns);
      const other = await open(ns);
      const l = await holder.lock("run", { owner: { tool: "h" } });
      if (!l.ok) throw l.error;
      expect(await holder.writeMetadata("run", { ...sampleMetadata("run", 0), status: "running" }, null)).toMatchObject({ ok: true });
      const pause = await other.requestControl("run", "pause", { reason: "lunch" });
      if (!pause.ok) throw pause.error;
      expect(pause.request).toMatchObject({ schemaVersion: 1, signal: "pause", reason: "lunch", requestedBy: { pid: process.pid } });
      expect(await holder.readControl("run")).toEqual({ ok: true, request: pause.request });
      // A store that does not hold the run cannot clear it while another holds it; the holder can.
      expect(await other.clearControl("run", pause.request)).toEqual({ ok: true, cleared: false });
      expect(await holder.clearControl("run", pause.request)).toEqual({ ok: true, cleared: true });
      expect(await other.readControl("run")).toEqual({ ok: true, request: null });
      await l.lock.release();
      // Nobody holds it now: a pause is refused (it would pause the next resume), a stop is filed.
      expect(await other.requestControl("run", "pause")).toMatchObject({ ok: false, error: { code: "NOT_RUNNING" } });
      expect(await other.requestControl("run", "stop")).toMatchObject({ ok: true, request: { signal: "stop" } });
    });

    it("migration 2 converts a pending request filed in version 1's shape, so it is still honoured", async () => {
      const db = `mig_${randomUUID().replaceAll("-", "")}`;
      await admin.query(`CREATE DATABASE ${db}`);
      const url = cluster.url.replace(/\/phasekit$/, `/${db}`);
      const pool = new pg.Pool({ connectionString: url, max: 2 });
      try {
        expect(await migrate(pool, MIGRATIONS.slice(0, 1))).toEqual({ applied: [1], version: 1 });
        await pool.query("INSERT INTO phasekit_runs (namespace, slug) VALUES ('default', 'run')");
        await pool.query(`INSERT INTO phasekit_control VALUES ('default', 'run', 'stop', '{"kind":"stop","requestedAt":"2026-01-01T00:00:00.000Z","reason":"old","by":"alice"}')`);
        const store = await openPostgresPlanStore({ pool, migrate: true });
        expect(store.migrations).toEqual({ applied: MIGRATIONS.map((m) => m.version).filter((v) => v >= 2), version: SCHEMA_VERSION });
        expect(await store.readControl("run")).toEqual({
          ok: true,
          request: { schemaVersion: 1, signal: "stop", reason: "old", requestedAt: "2026-01-01T00:00:00.000Z", requestedBy: { pid: 0, host: "alice" } },
        });
        await expect(pool.query(`INSERT INTO phasekit_control VALUES ('default', 'run', 'pause', '{"signal":"stop"}')`)).rejects.toThrow(/phasekit_control_signal/);
        await store.close();
      } finally {
        await pool.end();
      }
    });

    // The row edited behind a holder whose own clocks say its lease is fresh (a person, or the database's clock
    // stepped forward): outside the lease's contract (docs/postgres.md, "What a step costs"), so the body may start
    // as its `started` record is sent, but nothing of it is acknowledged and the new holder's rows stay as they were.
    it("a holder displaced behind its fresh lease acknowledges nothing of a step: LOCK_LOST, no row of it", async () => {
      const ns = `f-${randomUUID()}`;
      const a = await open(ns);
      const b = await open(ns);
      const la = await a.lock("run", { owner: { tool: "a" } });
      if (!la.ok) throw la.error;
      await a.writeMetadata("run", sampleMetadata("run", 0), null);
      const cpsA = await a.checkpoints("run", { now: () => new Date() });
      await expire(ns, "run");
      const lb = await b.lock("run", { owner: { tool: "b" } });
      if (!lb.ok) throw lb.error;
      const before = await snapshot(ns);
      await expect(cpsA.step("work", {}, () => ({ by: "a" }))).rejects.toMatchObject({ code: "LOCK_LOST" });
      expect(await snapshot(ns)).toEqual(before);
    });

    it("a `started` record that reaches the table after its step's completion never replaces it", async () => {
      const ns = `o-${randomUUID()}`;
      const pool = new pg.Pool({ connectionString: cluster.url, max: 4 });
      // Holds back every asynchronous-commit statement (the `started` write) until the test lets it go, so the
      // completion lands first; says when the completion has landed.
      let letStartedGo!: () => void;
      const startedHeld = new Promise<void>((r) => (letStartedGo = r));
      let completionLanded!: () => void;
      const landed = new Promise<void>((r) => (completionLanded = r));
      const slow = new Proxy(pool, {
        get(target, key) {
          if (key === "query") {
            return (q: unknown, values?: unknown) => {
              const text = typeof q === "string" ? q : (q as { text?: string }).text;
              const run = () => target.query(q as never, values as never);
              if (text?.includes("synchronous_commit', 'off'")) return startedHeld.then(run);
              if ((q as { name?: string }).name === STEP_WRITES.completed.name) return run().then((r: unknown) => (completionLanded(), r));
              return run();
            };
          }
          const v = Reflect.get(target, key, target) as unknown;
          return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      });
      const s = await openPostgresPlanStore({ pool: slow, namespace: ns });
      try {
        const l = await s.lock("run", { owner: { tool: "o" } });
        if (!l.ok) throw l.error;
        await s.writeMetadata("run", sampleMetadata("run", 0), null);
        const cps = await s.checkpoints("run", { now: () => new Date() });
        // A body that takes a turn of the event loop: its `started` record is sent meanwhile (a body that ends
        // within its first turn sends none; its completion carries the attempt).
        const body = async () => (await new Promise((r) => setImmediate(r)), { v: 1 });
        let settled = false;
        const step = cps.step("s", { x: 1 }, body).finally(() => (settled = true));
        await landed;
        await new Promise((r) => setImmediate(r));
        // The completion is in, and the step still waits for its late `started` acknowledgement.
        expect(settled).toBe(false);
        const status = async () => (await admin.query<{ status: string }>("SELECT record->>'status' AS status FROM phasekit_steps WHERE namespace = $1", [ns])).rows;
        expect(await status()).toEqual([{ status: "completed" }]);
        letStartedGo();
        expect(await step).toMatchObject({ reused: false, record: { status: "completed" } });
        expect(await status()).toEqual([{ status: "completed" }]);
        const again = await (await s.checkpoints("run", { now: () => new Date() })).step("s", { x: 1 }, () => ({ v: 2 }));
        expect(again).toMatchObject({ reused: true, output: { v: 1 } });
        await l.lock.release();
      } finally {
        await s.close();
        await pool.end();
      }
    });

    it("reruns a step whose artifact row was altered (content addressing checked on read)", async () => {
      const ns = `a-${randomUUID()}`;
      const s = await open(ns);
      await s.writeMetadata("run", sampleMetadata("run", 0), null);
      const l = await s.lock("run", { owner: { tool: "a" } });
      if (!l.ok) throw l.error;
      const cps = await l.lock.store.checkpoints("run", { now: () => new Date() });
      await cps.step("s", { x: 1 }, () => ({ v: 1 }));
      await admin.query(`UPDATE phasekit_artifacts SET body = '{"v":2}' WHERE namespace = $1`, [ns]);
      const again = await (await s.checkpoints("run", { now: () => new Date() })).step("s", { x: 1 }, () => ({ v: 3 }));
      expect(again).toMatchObject({ reused: false, reason: "artifact-corrupt", output: { v: 3 } });
    });
  });
}
