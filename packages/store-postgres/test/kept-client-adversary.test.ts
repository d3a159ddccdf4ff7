/**
 * The kept connection of a store's own pool (db/kept-client.ts) against what can happen to it: others waiting for
 * the pool while a loop keeps it busy, a statement timed out or cut under it (server-side timeout, the reply
 * bound, pg_terminate_backend while another statement waits), and the pool ending while a statement runs on it.
 */
import pg from "pg";
import { describe, expect, it, vi } from "vitest";
import { KeptClient } from "../src/db/kept-client.js";
import { openOwnPool } from "../src/db/own-pool.js";
import { query } from "../src/db/db.js";
import { openPostgresPlanStore } from "../src/index.js";
import { STEP_WRITES } from "../src/store/step-writes.js";
import { startCluster } from "./helpers/cluster.js";
import { failure } from "./helpers/failure.js";
import { storeSetup } from "./helpers/stores.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`postgres kept connection, adversary (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  // The file's admin pool and the cluster's teardown, as every store test has them.
  const { admin } = storeSetup(cluster, { adminMax: 1 });
  const pidOf = async (db: { pool: pg.Pool; namespace: string }): Promise<number> => (await query<{ pid: number }>(db, "SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
  // The backend running `marker` (a comment in its text), once it runs.
  const running = async (marker: string): Promise<number> => {
    let pid = 0;
    await vi.waitFor(
      async () => {
        const r = await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE query LIKE $1 AND pid <> pg_backend_pid()", [`%${marker}%`]);
        expect(r.rows).toHaveLength(1);
        pid = r.rows[0]!.pid;
      },
      { timeout: 10_000, interval: 10 },
    );
    return pid;
  };

  describe("postgres: the kept connection, against what can happen to it", () => {
    it("a checkout waiting for the full pool is served after the kept connection's statement, not when a loop using it pauses", async () => {
      const pool = new pg.Pool({ connectionString: cluster.url, max: 2, connectionTimeoutMillis: 20_000 });
      const kept = new KeptClient(pool);
      const held = await pool.connect();
      try {
        await kept.query("SELECT 1");
        // Both connections out (one held, one kept): the next checkout waits in the pool's queue.
        let sent = 0;
        let servedAfter: number | undefined;
        const waiter = pool.query("SELECT 2 AS two").then((r) => ((servedAfter = sent), r.rows[0]));
        await vi.waitFor(() => expect(pool.waitingCount).toBe(1));
        // A step loop: each statement sent as soon as the last one answered, until the waiter is served.
        while (servedAfter === undefined && sent < 500) {
          await kept.query("SELECT 1");
          sent++;
        }
        expect(await waiter).toEqual({ two: 2 });
        expect(servedAfter).toBeLessThanOrEqual(2);
      } finally {
        held.release();
        kept.giveBack();
        await pool.end();
      }
    });

    it("a statement timed out on the server drops its connection; the next one runs on a fresh one", async () => {
      const own = openOwnPool({ connectionString: cluster.url, max: 2, statement_timeout: 100 });
      const db = { pool: own.pool, namespace: "adv" };
      try {
        const first = await pidOf(db);
        expect(await failure(query(db, "SELECT pg_sleep(5)"))).toMatchObject({ code: "57014" });
        expect(await pidOf(db)).not.toBe(first);
      } finally {
        await own.end(60_000);
      }
    });

    it("a statement past its reply bound fails, and its connection is not used again", async () => {
      const own = openOwnPool({ connectionString: cluster.url, max: 2, query_timeout: 100 });
      const db = { pool: own.pool, namespace: "adv" };
      try {
        const first = await pidOf(db);
        expect(await failure(query(db, "SELECT pg_sleep(1) /* reply-bound */"))).toMatchObject({ message: expect.stringMatching(/timeout/i) });
        expect(await pidOf(db)).not.toBe(first);
      } finally {
        await own.end(60_000);
      }
    });

    it("terminated mid-statement while a second statement runs beside it: the first fails (or is sent again when idempotent), no unhandled error", async () => {
      const own = openOwnPool({ connectionString: cluster.url, max: 3 });
      own.pool.on("error", () => undefined);
      const db = { pool: own.pool, namespace: "adv" };
      try {
        const once = query(db, "SELECT pg_sleep(30) /* cut-once */", [], false);
        const victim = await running("cut-once");
        const beside = query<{ pid: number }>(db, "SELECT pg_backend_pid() AS pid, pg_sleep(0.2)");
        expect((await admin.query("SELECT pg_terminate_backend($1) AS ok", [victim])).rows[0]?.ok).toBe(true);
        expect(await failure(once)).toMatchObject({ code: "57P01" });
        expect((await beside).rows[0]!.pid).not.toBe(victim);
        // Sent again on a fresh connection when idempotent.
        const again = query<{ done: number }>(db, "SELECT 1 AS done, pg_sleep(0.3) /* cut-again */");
        const second = await running("cut-again");
        await admin.query("SELECT pg_terminate_backend($1)", [second]);
        expect((await again).rows[0]?.done).toBe(1);
        expect(await pidOf(db)).not.toBe(second);
      } finally {
        await own.end(60_000);
      }
    });

    it("the pool ending while a statement runs on the kept connection: the statement ends, then the pool, and nothing is sent after", async () => {
      const own = openOwnPool({ connectionString: cluster.url, max: 2 });
      const db = { pool: own.pool, namespace: "adv" };
      const inFlight = query<{ done: number }>(db, "SELECT 1 AS done, pg_sleep(0.3) /* at-close */");
      await running("at-close");
      await own.end(60_000);
      expect((await inFlight).rows[0]?.done).toBe(1);
      expect(own.pool.totalCount).toBe(0);
      expect(await failure(query(db, "SELECT 1"))).toMatchObject({ message: expect.stringMatching(/after calling end/) });
    });

    it("the pool's end past its bound cuts the kept connection's statement: it fails, the end returns, no unhandled error", async () => {
      const own = openOwnPool({ connectionString: cluster.url, max: 2 });
      own.pool.on("error", () => undefined);
      const db = { pool: own.pool, namespace: "adv" };
      const inFlight = failure(query(db, "SELECT pg_sleep(30) /* cut-at-close */"));
      const pid = await running("cut-at-close");
      await own.end(50);
      expect(await inFlight).toMatchObject({ message: expect.stringMatching(/terminated|closed|ended/i) });
      expect(await failure(query(db, "SELECT 1"))).toMatchObject({ message: expect.stringMatching(/after calling end/) });
      // The server saw the cut (its backend is gone).
      await admin.query("SELECT pg_terminate_backend($1)", [pid]);
    });
    it("a step write's local setting (synchronous_commit off) ends with its statement: the next statement on the kept connection has the server's", async () => {
      const own = openOwnPool({ connectionString: cluster.url, max: 2 });
      const db = { pool: own.pool, namespace: "adv" };
      try {
        await admin.query("INSERT INTO phasekit_runs (namespace, slug) VALUES ('adv', 'local') ON CONFLICT DO NOTHING");
        const before = await query<{ pid: number; sc: string }>(db, "SELECT pg_backend_pid() AS pid, current_setting('synchronous_commit') AS sc");
        const record = { stepId: "s", status: "started", startedAt: new Date().toISOString(), attempt: 1, inputFingerprint: "x" };
        const wrote = await query<{ fenced: string }>(db, STEP_WRITES.started, ["adv", "local", null, null, "s", JSON.stringify(record)]);
        expect(wrote.rows[0]?.fenced).toBe("1");
        const after = await query<{ pid: number; sc: string }>(db, "SELECT pg_backend_pid() AS pid, current_setting('synchronous_commit') AS sc");
        // The same connection when the statements followed closely; the setting is the server's either way.
        expect(after.rows[0]?.sc).toBe(before.rows[0]?.sc);
        expect(after.rows[0]?.sc).toBe("on");
      } finally {
        await own.end(60_000);
      }
    });

    it("a pool given by the caller keeps no connection out between statements, and the store's close leaves it open", async () => {
      const pool = new pg.Pool({ connectionString: cluster.url, max: 2 });
      try {
        const store = await openPostgresPlanStore({ pool, namespace: "given" });
        const l = await store.lock("run", { owner: { tool: "given" } });
        if (!l.ok) throw l.error;
        const cps = await l.lock.store.checkpoints("run", { now: () => new Date() });
        await cps.step("a", {}, () => 1);
        expect(pool.totalCount - pool.idleCount).toBe(0);
        await l.lock.release();
        await store.close();
        expect(pool.ending).toBe(false);
        expect((await pool.query<{ one: number }>("SELECT 1 AS one")).rows[0]?.one).toBe(1);
      } finally {
        await pool.end();
      }
    });
  });
}
