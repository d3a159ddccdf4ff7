/**
 * Two closes of one store at once (write-count.ts): each returns only once the step writes it found counted are
 * counted, whichever of the two sent the raise, or once the close's bound passed (timeouts.closeMs: set far past
 * the hold here, so the test does not race it on a loaded machine; close-sweep.test.ts keeps the hold on past the
 * default bound). Before, the close that found the raise already sent by the other
 * returned at once, while the raise still waited: the count rose after that close() had returned.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it, vi } from "vitest";
import { openPostgresPlanStore } from "../src/index.js";
import { startCluster } from "./helpers/cluster.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`postgres write count, two closes at once (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const admin = new pg.Pool({ connectionString: cluster.url, max: 3 });
  afterAll(async () => {
    await admin.end();
    cluster.destroy();
  });

  it("postgres: of two closes at once, neither returns before the count it flushes has landed", async () => {
    const ns = `two-${randomUUID().slice(0, 8)}`;
    const pool = new pg.Pool({ connectionString: cluster.url, max: 4 });
    const store = await openPostgresPlanStore({ pool, namespace: ns, leaseMs: 60_000, timeouts: { closeMs: 60_000 } });
    const locked = await store.lock("run", { owner: { tool: "close" } });
    if (!locked.ok) throw locked.error;
    const cps = await locked.lock.store.checkpoints("run", { now: () => new Date() });
    // The count's row is held by another session: the raise a close sends waits for it (an event, not a clock).
    const blocker = await admin.connect();
    await blocker.query("BEGIN");
    await blocker.query("SELECT 1 FROM phasekit_run_writes WHERE namespace = $1 AND slug = 'run' FOR UPDATE", [ns]);
    let held = true;
    const letGo = async (): Promise<void> => {
      if (!held) return;
      held = false;
      await blocker.query("ROLLBACK");
      blocker.release();
    };
    try {
      await cps.step("s", {}, () => 1);
      const returned: string[] = [];
      const closes = ["first", "second"].map((name) => store.close().then(() => void returned.push(name)));
      await vi.waitFor(
        async () => {
          const r = await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%phasekit_run_writes%' AND query NOT LIKE '%pg_stat_activity%'");
          expect(r.rows[0].n).toBe(1);
        },
        { timeout: 10_000, interval: 10 },
      );
      expect(returned).toEqual([]);
      await letGo();
      await Promise.all(closes);
      expect(returned.sort()).toEqual(["first", "second"]);
    } finally {
      await letGo();
      await pool.end();
    }
  });
}
