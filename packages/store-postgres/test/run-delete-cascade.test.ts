/**
 * A run's steps and artifacts go with its row (schema 10: a trigger on phasekit_runs, in place of their foreign
 * keys' ON DELETE CASCADE): deleted by retention, by hand with DELETE, or with TRUNCATE; a step write racing the
 * delete of its run leaves no row behind; rows written before the migration keep going with their run; and an
 * open names a delete trigger that is missing or disabled.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { migrate, MIGRATIONS, openPostgresPlanStore, type PostgresPlanStore } from "../src/index.js";
import { startCluster } from "./helpers/cluster.js";
import { failure } from "./helpers/failure.js";
import { storeSetup } from "./helpers/stores.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`postgres run delete cascade (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const { open, admin, expire } = storeSetup(cluster, { leaseMs: 60_000 });
  const freshDb = async (): Promise<string> => {
    const db = `s10_${randomUUID().replaceAll("-", "")}`;
    await admin.query(`CREATE DATABASE ${db}`);
    return `postgres://phasekit@127.0.0.1:${cluster.port}/${db}`;
  };
  /** How many step and artifact rows `slug` of `ns` has (through `pool`). */
  const rows = async (ns: string, slug: string, pool: pg.Pool = admin): Promise<{ steps: number; artifacts: number }> => {
    const r = await pool.query<{ steps: string; artifacts: string }>(
      "SELECT (SELECT count(*) FROM phasekit_steps WHERE namespace = $1 AND slug = $2) AS steps, (SELECT count(*) FROM phasekit_artifacts WHERE namespace = $1 AND slug = $2) AS artifacts",
      [ns, slug],
    );
    return { steps: Number(r.rows[0]!.steps), artifacts: Number(r.rows[0]!.artifacts) };
  };
  /** A run `slug` of three completed steps with outputs, its lease released. */
  const run = async (store: PostgresPlanStore, slug: string): Promise<string[]> => {
    const l = await store.lock(slug, { owner: { tool: "cascade" } });
    if (!l.ok) throw l.error;
    const cps = await l.lock.store.checkpoints(slug, { now: () => new Date() });
    const ran: string[] = [];
    for (const id of ["a", "b", "c"]) await cps.step(id, { id }, () => (ran.push(id), { id, text: `output of ${id}` }));
    await l.lock.release();
    return ran;
  };

  describe("postgres: a run's steps and artifacts go with its row", () => {
    it("deleted by hand with DELETE: its rows go, another run's stay, and a new run of the same id starts with no history", async () => {
      const ns = `del-${randomUUID()}`;
      const store = await open(ns);
      await run(store, "hand");
      await run(store, "kept");
      expect(await rows(ns, "hand")).toEqual({ steps: 3, artifacts: 3 });
      await admin.query("DELETE FROM phasekit_runs WHERE namespace = $1 AND slug = 'hand'", [ns]);
      expect(await rows(ns, "hand")).toEqual({ steps: 0, artifacts: 0 });
      expect(await rows(ns, "kept")).toEqual({ steps: 3, artifacts: 3 });
      // The same id again: every step runs, nothing of the deleted run is reused.
      expect(await run(store, "hand")).toEqual(["a", "b", "c"]);
    });

    it("by retention (gc), with the journal and the rest", async () => {
      const ns = `gc-${randomUUID()}`;
      const store = await open(ns);
      const l = await store.lock("run", { owner: { tool: "cascade" } });
      if (!l.ok) throw l.error;
      const now = new Date().toISOString();
      const metadata = { schemaVersion: 1, slug: "run", ownerTool: "cascade", currentTool: "cascade", status: "completed", phase: "done", createdAt: now, updatedAt: now, state: {} };
      expect(await l.lock.store.writeMetadata("run", metadata as never, null)).toMatchObject({ ok: true });
      const cps = await l.lock.store.checkpoints("run", { now: () => new Date() });
      for (const id of ["a", "b"]) await cps.step(id, { id }, () => ({ id }));
      await l.lock.release();
      await expire(ns, "run");
      expect(await rows(ns, "run")).toEqual({ steps: 2, artifacts: 2 });
      expect((await store.gc({ keep: 0, now: () => new Date(Date.now() + 86_400_000) })).removed.map((r) => r.slug)).toEqual(["run"]);
      expect(await rows(ns, "run")).toEqual({ steps: 0, artifacts: 0 });
      expect((await admin.query("SELECT count(*)::int AS n FROM phasekit_journal WHERE namespace = $1", [ns])).rows[0]?.n).toBe(0);
    });

    it("a step write racing the delete of its run: refused, and no row is left without its run", async () => {
      const ns = `race-${randomUUID()}`;
      const store = await open(ns);
      const l = await store.lock("run", { owner: { tool: "cascade" } });
      if (!l.ok) throw l.error;
      const cps = await l.lock.store.checkpoints("run", { now: () => new Date() });
      await cps.step("a", {}, () => "first");
      // An operator deletes the held run in a transaction still open: the step's statement waits for its row.
      const operator = await admin.connect();
      try {
        await operator.query("BEGIN");
        await operator.query("DELETE FROM phasekit_runs WHERE namespace = $1 AND slug = 'run'", [ns]);
        const step = failure(cps.step("b", {}, () => ({ late: true })));
        await waitForLockWait();
        await operator.query("COMMIT");
        expect(await step).toMatchObject({ name: "WorkflowError", code: "LOCK_LOST" });
      } finally {
        operator.release();
      }
      expect(await rows(ns, "run")).toEqual({ steps: 0, artifacts: 0 });
    });

    it("TRUNCATE phasekit_runs … CASCADE takes every run's steps and artifacts", async () => {
      const url = await freshDb();
      await migrate(url);
      const own = await openPostgresPlanStore({ connectionString: url, namespace: "t" });
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      try {
        await run(own, "one");
        await run(own, "two");
        await pool.query("TRUNCATE phasekit_runs CASCADE");
        expect(await rows("t", "one", pool)).toEqual({ steps: 0, artifacts: 0 });
        expect(await rows("t", "two", pool)).toEqual({ steps: 0, artifacts: 0 });
      } finally {
        await own.close();
        await pool.end();
      }
    });

    it("rows written under schema 9 stay through the migration to 10, and then go with their run", async () => {
      const url = await freshDb();
      await migrate(url, MIGRATIONS.filter((m) => m.version <= 9));
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      try {
        await pool.query("INSERT INTO phasekit_runs (namespace, slug) VALUES ('m', 'old'), ('m', 'other')");
        for (const slug of ["old", "other"]) {
          await pool.query("INSERT INTO phasekit_steps (namespace, slug, step_id, record, epoch, first_started) VALUES ('m', $1, 'a', '{\"status\":\"completed\"}', 1, '2026-01-01T00:00:00.000Z')", [slug]);
          await pool.query("INSERT INTO phasekit_artifacts (namespace, slug, fingerprint, body) VALUES ('m', $1, 'fp', '{}')", [slug]);
        }
        expect(await migrate(url)).toMatchObject({ applied: MIGRATIONS.filter((m) => m.version > 9).map((m) => m.version) });
        expect(await rows("m", "old", pool)).toEqual({ steps: 1, artifacts: 1 });
        await pool.query("DELETE FROM phasekit_runs WHERE namespace = 'm' AND slug = 'old'");
        expect(await rows("m", "old", pool)).toEqual({ steps: 0, artifacts: 0 });
        expect(await rows("m", "other", pool)).toEqual({ steps: 1, artifacts: 1 });
      } finally {
        await pool.end();
      }
    });

    it("an open names a delete trigger that is missing or disabled (INVALID_CONFIG), not a store that would keep a deleted run's steps", async () => {
      const url = await freshDb();
      await migrate(url);
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      try {
        await pool.query("DROP TRIGGER phasekit_run_deleted ON phasekit_runs");
        const dropped = await failure(openPostgresPlanStore({ connectionString: url }));
        expect(dropped).toMatchObject({ name: "WorkflowError", code: "INVALID_CONFIG", details: { value: ["phasekit_run_deleted"] } });
        expect(String(dropped?.details?.hint)).toMatch(/as the schema owner/);
        await pool.query("CREATE TRIGGER phasekit_run_deleted AFTER DELETE ON phasekit_runs FOR EACH ROW EXECUTE FUNCTION phasekit_run_deleted()");
        await pool.query("ALTER TABLE phasekit_runs DISABLE TRIGGER phasekit_runs_truncated");
        const disabled = await failure(openPostgresPlanStore({ connectionString: url }));
        expect(disabled).toMatchObject({ name: "WorkflowError", code: "INVALID_CONFIG", details: { value: ["phasekit_runs_truncated"] } });
        await pool.query("ALTER TABLE phasekit_runs ENABLE TRIGGER phasekit_runs_truncated");
        const store = await openPostgresPlanStore({ connectionString: url });
        await store.close();
      } finally {
        await pool.end();
      }
    });
  });

  /** Returns once a session of the cluster waits for a row lock (the step statement behind the operator's delete). */
  async function waitForLockWait(): Promise<void> {
    for (;;) {
      const r = await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%phasekit_steps%' AND query NOT LIKE '%pg_stat_activity%'");
      if ((r.rows[0]?.n ?? 0) > 0) return;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}
