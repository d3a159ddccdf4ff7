/**
 * The connection a store's own pool keeps between statements that follow closely (db/kept-client.ts): it serves
 * one statement at a time (another goes through the pool), goes back to the pool once idle, is dropped when a
 * statement on it fails or the server ends it while kept (no unhandled `error` event), and lets the pool end.
 */
import pg from "pg";
import { describe, expect, it, vi } from "vitest";
import { KeptClient, KEEP_MS } from "../src/db/kept-client.js";
import { openOwnPool } from "../src/db/own-pool.js";
import { query } from "../src/db/db.js";
import { startCluster } from "./helpers/cluster.js";
import { failure } from "./helpers/failure.js";
import { storeSetup } from "./helpers/stores.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`postgres kept connection (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  // The file's admin pool and the cluster's teardown, as every store test has them.
  const { admin } = storeSetup(cluster, { adminMax: 1 });
  const pid = async (kept: KeptClient): Promise<number> => (await kept.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;

  describe("postgres: the kept connection of a store's own pool", () => {
    it("statements in a row share one connection; one sent while it is busy goes through the pool; idle, it goes back", async () => {
      const pool = new pg.Pool({ connectionString: cluster.url, max: 3 });
      const kept = new KeptClient(pool);
      try {
        const first = await pid(kept);
        expect(await pid(kept)).toBe(first);
        // Checked out while kept: the pool counts it as not idle.
        expect(pool.totalCount - pool.idleCount).toBe(1);
        const [slow, beside] = await Promise.all([kept.query<{ pid: number }>("SELECT pg_backend_pid() AS pid, pg_sleep(0.05)"), pid(kept)]);
        expect(slow.rows[0]!.pid).toBe(first);
        expect(beside).not.toBe(first);
        await vi.waitFor(() => expect(pool.idleCount).toBe(pool.totalCount), { timeout: 5_000, interval: KEEP_MS });
      } finally {
        kept.giveBack();
        await pool.end();
      }
    });

    it("a failed statement drops its connection; the next one takes another", async () => {
      const pool = new pg.Pool({ connectionString: cluster.url, max: 2 });
      const kept = new KeptClient(pool);
      try {
        const first = await pid(kept);
        expect(await failure(kept.query("SELECT 1/0"))).toMatchObject({ code: "22012" });
        expect(await pid(kept)).not.toBe(first);
      } finally {
        kept.giveBack();
        await pool.end();
      }
    });

    it("ended by the server while kept (pg_terminate_backend): no unhandled error, and the next statement runs on a fresh connection", async () => {
      const pool = new pg.Pool({ connectionString: cluster.url, max: 2 });
      pool.on("error", () => undefined);
      const kept = new KeptClient(pool);
      try {
        const first = await pid(kept);
        expect((await admin.query("SELECT pg_terminate_backend($1) AS ok", [first])).rows[0]?.ok).toBe(true);
        // The pool no longer counts it once the kept connection saw its end.
        await vi.waitFor(() => expect(pool.totalCount).toBe(0), { timeout: 5_000, interval: 5 });
        expect(await pid(kept)).not.toBe(first);
      } finally {
        kept.giveBack();
        await pool.end();
      }
    });

    it("a store's own pool ends with its kept connection, and sends nothing after", async () => {
      const own = openOwnPool({ connectionString: cluster.url, max: 2 });
      const db = { pool: own.pool, namespace: "kept" };
      expect((await query<{ one: number }>(db, "SELECT 1 AS one")).rows[0]?.one).toBe(1);
      expect(own.pool.totalCount - own.pool.idleCount).toBe(1);
      // Ends (its bound is long: nothing is cut), the kept connection given back to the ending pool.
      await own.end(60_000);
      expect(own.pool.totalCount).toBe(0);
      expect(await failure(query(db, "SELECT 1"))).toMatchObject({ message: expect.stringMatching(/after calling end/) });
    });
  });
}
