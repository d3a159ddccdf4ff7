/**
 * A holder whose lease is gone writes nothing, not even the run's row: its run removed by retention while it
 * stood still, its lease taken by another store, or its lease released. Each holder write is refused with
 * LOCK_LOST and no row of any phasekit_* table of the namespace changes (a displaced holder once re-created the
 * row of a run gc had removed, before its fenced statement was refused).
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { PlanStore } from "@phasekit/adapters-pi";
import { sampleMetadata } from "../../adapters-pi/test/helpers/metadata-fixtures.js";
import { startCluster } from "./helpers/cluster.js";
import { storeSetup } from "./helpers/stores.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`postgres displaced holder writes nothing (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  // A long lease: its heartbeat does not run during the test, so only the database's fence decides.
  const { open, admin, expire } = storeSetup(cluster, { leaseMs: 60_000 });
  // Every row of every phasekit_* table with a namespace column (the schema's own list, not a copy of it).
  const snapshot = async (ns: string): Promise<Record<string, unknown[]>> => {
    const tables = (
      await admin.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name LIKE 'phasekit\\_%' AND column_name = 'namespace' ORDER BY 1",
      )
    ).rows.map((r) => r.table_name);
    expect(tables).toEqual(expect.arrayContaining(["phasekit_runs", "phasekit_journal", "phasekit_steps", "phasekit_control", "phasekit_run_writes"]));
    const out: Record<string, unknown[]> = {};
    for (const t of tables) out[t] = (await admin.query(`SELECT * FROM ${t} WHERE namespace = $1 ORDER BY 1, 2`, [ns])).rows;
    return out;
  };
  /** Every holder write of the journal and the metadata through `store`, each refused with LOCK_LOST. */
  const allRefused = async (store: PlanStore): Promise<void> => {
    const entry = { generation: 1, at: "2026-01-01T00:00:00.000Z", event: "late" };
    expect(await store.appendJournal("run", entry)).toMatchObject({ ok: false, error: { code: "LOCK_LOST" } });
    expect(await store.writeMetadata("run", sampleMetadata("run", 5), null)).toMatchObject({ ok: false, error: { code: "LOCK_LOST" } });
    expect(await store.writeMetadata("run", sampleMetadata("run", 5), 1)).toMatchObject({ ok: false, error: { code: "LOCK_LOST" } });
  };

  describe("postgres: a holder whose lease is gone writes nothing", () => {
    it("its run removed by retention while it stood still: the row is not re-created", async () => {
      const ns = `gc-${randomUUID()}`;
      const a = await open(ns);
      const other = await open(ns);
      const la = await a.lock("run", { owner: { tool: "a" } });
      if (!la.ok) throw la.error;
      expect(await la.lock.store.writeMetadata("run", { ...sampleMetadata("run", 0), status: "completed" }, null)).toMatchObject({ ok: true });
      await expire(ns, "run");
      expect((await other.gc({ keep: 0, now: () => new Date() })).removed.map((r) => r.slug)).toEqual(["run"]);
      const before = await snapshot(ns);
      expect(before.phasekit_runs).toEqual([]);
      // Through the lease's own store, and through the store object that took it (its one lease on the run).
      await allRefused(la.lock.store);
      await allRefused(a);
      expect(await snapshot(ns)).toEqual(before);
      // Released afterwards: the lease's store still refuses, and still before writing anything.
      await la.lock.release();
      await allRefused(la.lock.store);
      expect(await snapshot(ns)).toEqual(before);
    });

    it("its lease taken by another store: the new holder's rows are untouched", async () => {
      const ns = `taken-${randomUUID()}`;
      const a = await open(ns);
      const b = await open(ns);
      const la = await a.lock("run", { owner: { tool: "a" } });
      if (!la.ok) throw la.error;
      expect(await la.lock.store.writeMetadata("run", sampleMetadata("run", 0), null)).toMatchObject({ ok: true });
      const cps = await la.lock.store.checkpoints("run", { now: () => new Date() });
      await expire(ns, "run");
      const lb = await b.lock("run", { owner: { tool: "b" } });
      if (!lb.ok) throw lb.error;
      expect(await lb.lock.store.writeMetadata("run", sampleMetadata("run", 1), 1)).toMatchObject({ ok: true });
      const before = await snapshot(ns);
      await allRefused(la.lock.store);
      await allRefused(a);
      // A step: refused, and not counted for readers either (the count row is the new holder's run's).
      await expect(cps.step("late", {}, () => 1)).rejects.toMatchObject({ code: "LOCK_LOST" });
      await a.close(); // sends every count still pending
      expect(await snapshot(ns)).toEqual(before);
      await lb.lock.release();
      await la.lock.release();
    });
  });
}
