/**
 * A step write whose caller gave it up when the lease was declared lost, that lands afterwards: the holder
 * declares the lease lost by its own clock (no renewal landed for a lease), while the database may still count
 * it live (its `lease_until` runs from when the renewal reached it, and an operator may have moved it), and the
 * fenced statement already sent then lands. The row is visible to every reader, so the write count rises for it
 * (write-count.ts counts the statement, not its caller). Before, the count was raised only for writes whose
 * caller saw them land: the run's signature stayed the same with the step's new record in view (the inspector's
 * change check missed it) until the lease ran out.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { startCluster } from "./helpers/cluster.js";
import { storeSetup } from "./helpers/stores.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`postgres write count after a lost lease (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const { open, admin } = storeSetup(cluster, { adminMax: 3 });

  const waitingOn = async (blocker: number): Promise<void> =>
    vi.waitFor(
      async () => {
        const r = await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid)) AND query LIKE '%phasekit_steps%'", [blocker]);
        expect(r.rows[0].n).toBe(1);
      },
      { timeout: 10_000, interval: 10 },
    );

  it("postgres: a step write that lands after its lease was declared lost changes the run's signature", async () => {
    const ns = `lost-${randomUUID().slice(0, 8)}`;
    // The step waits for the row locks as long as the test needs (lockMs); the lease is short, so it is declared lost meanwhile.
    const store = await open(ns, { leaseMs: 1_000, timeouts: { lockMs: 30_000 } });
    const locked = await store.lock("run", { owner: { tool: "lost" } });
    if (!locked.ok) throw locked.error;
    const lease = locked.lock;
    const cps = await lease.store.checkpoints("run", { now: () => new Date() });
    const signature = () => (store.runSignature as (slug: string) => Promise<string>)("run");
    // s1's row is there (a failed first attempt), so that its next write can be held on that row alone.
    await expect(cps.step("s1", {}, () => Promise.reject(new Error("first attempt")))).rejects.toThrow("first attempt");

    const run = await admin.connect();
    const row = await admin.connect();
    try {
      // One operator holds s1's row, another the run's row: renewals find the run's row busy, and s1's next
      // statement waits for it.
      await row.query("BEGIN");
      await row.query("SELECT 1 FROM phasekit_steps WHERE namespace = $1 AND slug = 'run' AND step_id = 's1' FOR UPDATE", [ns]);
      const rowPid = (await row.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number;
      await run.query("BEGIN");
      await run.query("SELECT 1 FROM phasekit_runs WHERE namespace = $1 AND slug = 'run' FOR UPDATE", [ns]);
      const runPid = (await run.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number;
      const step = cps.step("s1", {}, () => 1).then(
        () => ({ ok: true as const }),
        (error: unknown) => ({ ok: false as const, error }),
      );
      await waitingOn(runPid);
      // No renewal lands for a lease: the holder declares it lost, and the step's caller gives its write up.
      if (!lease.signal.aborted) await new Promise((r) => lease.signal.addEventListener("abort", r, { once: true }));
      expect(await step).toMatchObject({ ok: false, error: { code: "WRITE_FAILED", details: { rowLocked: true } } });

      // The run's row is let go with the lease live in the database (the operator moved lease_until, as a
      // renewal that reached the server late would): the statement passes its fence and waits for s1's row.
      await run.query("UPDATE phasekit_runs SET lease_until = now() + interval '1 minute' WHERE namespace = $1 AND slug = 'run'", [ns]);
      await run.query("COMMIT");
      await waitingOn(rowPid);
      const seen = await signature();
      await row.query("COMMIT");
      await vi.waitFor(
        async () => {
          const r = await admin.query("SELECT record->>'status' AS status FROM phasekit_steps WHERE namespace = $1 AND slug = 'run' AND step_id = 's1'", [ns]);
          expect(r.rows[0]?.status).not.toBe("failed");
        },
        { timeout: 10_000, interval: 10 },
      );
      // A reader that saw `seen` must see a change now that s1's new record is in view.
      await vi.waitFor(async () => expect(await signature()).not.toBe(seen), { timeout: 5_000, interval: 20 });
    } finally {
      for (const c of [run, row]) {
        await c.query("ROLLBACK").catch(() => undefined);
        c.release();
      }
    }
  });
}
