/**
 * The lease is honest both ways: nobody contending means no LOCK_LOST, however late the renewal (a step that
 * blocks the event loop past the lease; many runs sharing one pool at a 1 s lease), because the heartbeat has
 * its own connection and an overdue renewal is awaited; and a write after the lease ran out is refused unless a
 * renewal confirms the lease is still this holder's.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { describe, expect, it, vi } from "vitest";
import { runWorkflow } from "@phasekit/adapters-pi";
import { sampleMetadata } from "../../adapters-pi/test/helpers/metadata-fixtures.js";
import { openPostgresPlanStore } from "../src/index.js";
import { startCluster } from "./helpers/cluster.js";
import { storeSetup } from "./helpers/stores.js";

const started = startCluster();

/** Blocks the event loop (no timer, no socket read runs) for `ms`. */
function blockEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy
  }
}

if (!started.ok) {
  describe.skip(`postgres honest lease (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const { open, admin, expire } = storeSetup(cluster);
  const repoRoot = () => mkdtempSync(path.join(tmpdir(), "phasekit-pg-lease-"));

  describe("postgres: the lease is honest both ways", () => {
    it("a lease is not fresh after a suspend (the wall clock moved past the lease while the monotonic one stood still): the body's check must ask the database", async () => {
      const store = await open(`suspend-${randomUUID()}`, { leaseMs: 60_000 });
      const held = await store.lock("run", { owner: { tool: "t" } });
      if (!held.ok) throw held.error;
      const lease = held.lock as unknown as { fresh(): boolean };
      expect(lease.fresh()).toBe(true);
      vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 3_600_000 });
      try {
        expect(lease.fresh()).toBe(false);
      } finally {
        vi.useRealTimers();
      }
      await held.lock.release();
    });

    it("a step that blocks the event loop past a 1 s lease, nobody contending: the run completes, no LOCK_LOST", async () => {
      const store = await open(`block-${randomUUID()}`, { leaseMs: 1_000 });
      const r = await runWorkflow({ repoRoot: repoRoot(), toolName: "t", target: "blocked", store, lock: { staleMs: 1_000 } }, async (ctx) => {
        await ctx.step("before", {}, () => 0);
        await ctx.step("block", {}, () => (blockEventLoop(2_500), 1));
        await ctx.step("after", {}, () => 2);
        return "done";
      });
      expect(r).toMatchObject({ status: "completed", result: "done" });
    });

    it("30 runs at a 1 s lease on one 10-connection pool, each writing two 3 MB outputs: no LOCK_LOST, all complete", async () => {
      const store = await open(`load-${randomUUID()}`, { leaseMs: 1_000 });
      const big = "x".repeat(3_000_000);
      const results = await Promise.allSettled(
        Array.from({ length: 30 }, (_, i) =>
          runWorkflow({ repoRoot: repoRoot(), toolName: "t", target: `run-${i}`, store, lock: { staleMs: 1_000 } }, async (ctx) => {
            for (let s = 0; s < 2; s++) await ctx.step(`s${s}`, { i, s }, () => ({ s, big }));
            return i;
          }),
        ),
      );
      const failed = results.flatMap((r) => (r.status === "rejected" ? [`${String((r.reason as { code?: string }).code)}: ${String((r.reason as Error).message)}`] : []));
      expect(failed).toEqual([]);
    }, 60_000);

    it("a write after the lease ran out is refused when no renewal confirms it (heartbeat stopped), accepted when one does", async () => {
      const ns = `expired-${randomUUID()}`;
      const store = await open(ns, { leaseMs: 10_000 });

      // A live heartbeat: the write finds the lease run out, the renewal finds it still ours, the write lands.
      const live = await store.lock("live", { owner: { tool: "t" } });
      if (!live.ok) throw live.error;
      await expire(ns, "live");
      expect(await live.lock.store?.writeMetadata("live", sampleMetadata("live", 0), null)).toMatchObject({ ok: true });
      const after = await admin.query<{ live: boolean }>("SELECT lease_until > now() AS live FROM phasekit_runs WHERE namespace = $1 AND slug = 'live'", [ns]);
      expect(after.rows[0]?.live).toBe(true);

      // A stopped heartbeat (the holder is going away): nothing renews it, so the run-out lease writes nothing.
      const gone = await store.lock("gone", { owner: { tool: "t" } });
      if (!gone.ok) throw gone.error;
      (gone.lock as unknown as { stop(): void }).stop();
      await expire(ns, "gone");
      expect(await gone.lock.store?.writeMetadata("gone", sampleMetadata("gone", 0), null)).toMatchObject({ ok: false, error: { code: "LOCK_LOST" } });
      const cps = await gone.lock.store?.checkpoints("gone", { now: () => new Date() });
      await expect(cps?.step("s", {}, () => 1)).rejects.toMatchObject({ code: "LOCK_LOST" });
      const rows = await admin.query("SELECT metadata FROM phasekit_runs WHERE namespace = $1 AND slug = 'gone'", [ns]);
      expect(rows.rows[0]?.metadata).toBeNull();
    });

    it("a release whose statement fails still ends the lease for its holder: its check says released (it passed, with nothing renewing the lease)", async () => {
      const namespace = `release-fails-${randomUUID()}`;
      const pool = new pg.Pool({ connectionString: cluster.url, max: 2 });
      const store = await openPostgresPlanStore({ pool, namespace, leaseMs: 60_000 });
      const held = await store.lock("run", { owner: { tool: "t" } });
      if (!held.ok) throw held.error;
      // The release's UPDATE cannot be sent: the pool it goes through is gone.
      await pool.end();
      expect(await held.lock.release()).toMatchObject({ ok: false });
      await expect(held.lock.assertHeld()).rejects.toMatchObject({ code: "LOCK_LOST", details: { ended: "released" } });
      await store.close().catch(() => undefined);
    });

    it("LOCK_LOST when another holder took the run; the run's signal says taken", async () => {
      const ns = `taken-${randomUUID()}`;
      const a = await open(ns, { leaseMs: 1_000 });
      const b = await open(ns, { leaseMs: 1_000 });
      const la = await a.lock("run", { owner: { tool: "a" } });
      if (!la.ok) throw la.error;
      await expire(ns);
      const lb = await b.lock("run", { owner: { tool: "b" } });
      if (!lb.ok) throw lb.error;
      await new Promise((r) => la.lock.signal.addEventListener("abort", r, { once: true }));
      expect(la.lock.signal.reason).toMatchObject({ code: "LOCK_LOST", details: { taken: true } });
      await lb.lock.release();
    });
  });
}
