/**
 * Every wait is bounded: an operator's row lock on the run's row ends the run with a typed error while the lock
 * is still held (within the lease plus 2 s); a migrator stuck holding its lock ends an open, or a run, with a
 * typed error; a backend terminated under a statement is retried where the statement is idempotent, and the run
 * goes on. Each is judged by the order of events (the run settles before the lock is let go), not by a clock.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { runWorkflow } from "@phasekit/adapters-pi";
import { migrate, MIGRATION_LOCK_KEY, openPostgresPlanStore } from "../src/index.js";
import { startCluster } from "./helpers/cluster.js";
import { storeSetup } from "./helpers/stores.js";
import { startTcpProxy } from "./helpers/tcp-proxy.js";

const started = startCluster();

/** Holds a transaction open on its own connection until `end()`; `ended` says whether it was let go yet. */
async function holdTransaction(url: string, statements: Array<[string, unknown[]]>): Promise<{ end(): Promise<void>; ended(): boolean; pid: number }> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query("BEGIN");
  for (const [sql, values] of statements) await c.query(sql, values);
  const pid = (await c.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid as number;
  let done = false;
  return {
    pid,
    ended: () => done,
    async end() {
      if (done) return;
      done = true;
      await c.query("COMMIT").catch(() => undefined);
      await c.end();
    },
  };
}

const settle = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error: error as { name?: string; code?: string; details?: Record<string, unknown> } }),
  );

if (!started.ok) {
  describe.skip(`postgres bounded waits (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const { open, admin } = storeSetup(cluster);
  const repoRoot = () => mkdtempSync(path.join(tmpdir(), "phasekit-pg-waits-"));

  describe("postgres: every wait is bounded", () => {
    it("an operator's row lock on the run's row ends the run with a typed error while the lock is still held (lease + 2 s)", async () => {
      const leaseMs = 2_000;
      const ns = `rowlock-${randomUUID()}`;
      const store = await open(ns, { leaseMs });
      let operator: Awaited<ReturnType<typeof holdTransaction>> | undefined;
      const run = settle(
        runWorkflow({ repoRoot: repoRoot(), toolName: "t", target: "locked-row", store, lock: { staleMs: leaseMs }, onHookFailure: () => undefined }, async (ctx) => {
          await ctx.step("s0", {}, () => 0);
          operator = await holdTransaction(cluster.url, [["SELECT 1 FROM phasekit_runs WHERE namespace = $1 AND slug = $2 FOR UPDATE", [ns, "locked-row"]]]);
          await ctx.step("s1", {}, () => 1);
          return "done";
        }),
      );
      // The operator lets go only after lease + 2 s: a run that waited for the lock would settle after that.
      const first = await Promise.race([run.then((r) => ({ run: r })), (async () => {
        while (operator === undefined) await sleep(10);
        await sleep(leaseMs + 2_000);
        return { run: null };
      })()]);
      const stillHeld = operator !== undefined && !operator.ended();
      await operator?.end();
      expect(first.run, "the run was still waiting for the row lock at lease + 2 s").not.toBeNull();
      expect(stillHeld).toBe(true);
      expect(first.run).toMatchObject({ ok: false, error: { name: "WorkflowError", code: "WRITE_FAILED" } });
      const details = (first.run as { error: { details: Record<string, unknown> } }).error.details;
      expect(details.timedOut === "lock" || details.rowLocked === true).toBe(true);
    });

    it("a network partition (a paused TCP proxy) mid-step ends the run with a typed error before it heals (lease + 2 s)", async () => {
      const leaseMs = 2_000;
      const proxy = await startTcpProxy(cluster.port);
      const ns = `partition-${randomUUID()}`;
      const store = await openPostgresPlanStore({ connectionString: `postgres://phasekit@127.0.0.1:${proxy.port}/phasekit`, namespace: ns, leaseMs });
      try {
        let cut = false;
        const run = settle(
          runWorkflow({ repoRoot: repoRoot(), toolName: "t", target: "partitioned", store, lock: { staleMs: leaseMs }, onHookFailure: () => undefined }, async (ctx) => {
            await ctx.step("s0", {}, () => 0);
            await ctx.step("s1", {}, () => ((cut = true), proxy.pause(), 1));
            await ctx.step("s2", {}, () => 2);
            return "done";
          }),
        );
        // The link heals only at lease + 2 s after the cut: a run that waited for it would settle after that.
        const raced = await Promise.race([run, (async () => {
          while (!cut) await sleep(10);
          await sleep(leaseMs + 2_000);
          return null;
        })()]);
        proxy.resume();
        expect(raced, "the run was still waiting for the partition to heal at lease + 2 s").not.toBeNull();
        expect(raced).toMatchObject({ ok: false, error: { name: "WorkflowError", details: { connectionLost: true } } });
      } finally {
        proxy.resume();
        await store.close();
        await proxy.close();
      }
    });

    it("a migrator stuck holding the migration lock ends a migrating open (and migrate()) with a typed error, not a wait", async () => {
      const leaseMs = 2_000;
      const stuck = await holdTransaction(cluster.url, [["SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK_KEY]]]);
      try {
        const opening = settle(openPostgresPlanStore({ connectionString: cluster.url, namespace: `mig-${randomUUID()}`, leaseMs, migrate: true }));
        const migrating = settle(migrate(cluster.url, undefined, { timeouts: { lockMs: 500 } }));
        const raced = await Promise.race([Promise.all([opening, migrating]), sleep(leaseMs + 2_000).then(() => null)]);
        expect(raced, "open or migrate was still waiting for the stuck migrator").not.toBeNull();
        const [o, m] = raced ?? [];
        expect(o).toMatchObject({ ok: false, error: { code: "WRITE_FAILED", details: { timedOut: "lock" } } });
        expect(m).toMatchObject({ ok: false, error: { code: "WRITE_FAILED", details: { timedOut: "lock" } } });
      } finally {
        await stuck.end();
      }
    });

    it("a migrator holding the tables mid-migration: a run's lock ends with a typed error naming the lock wait", async () => {
      const leaseMs = 2_000;
      const store = await open(`midmig-${randomUUID()}`, { leaseMs });
      const stuck = await holdTransaction(cluster.url, [["LOCK TABLE phasekit_runs IN ACCESS EXCLUSIVE MODE", []]]);
      try {
        const run = settle(runWorkflow({ repoRoot: repoRoot(), toolName: "t", target: "blocked", store, onHookFailure: () => undefined }, async () => "never"));
        const raced = await Promise.race([run, sleep(leaseMs + 2_000).then(() => null)]);
        expect(raced, "the run was still waiting for the migrator").not.toBeNull();
        expect(raced).toMatchObject({ ok: false, error: { code: "WRITE_FAILED", details: { timedOut: "lock" } } });
      } finally {
        await stuck.end();
      }
    });

    it("a backend terminated under a step's write (pg_terminate_backend) is retried on a new connection and the run completes", async () => {
      const ns = `term-${randomUUID()}`;
      const store = await open(ns, { leaseMs: 10_000 });
      const ran: string[] = [];
      let terminated = 0;
      const result = await runWorkflow({ repoRoot: repoRoot(), toolName: "t", target: "terminated", store }, async (ctx) => {
        await ctx.step("s0", {}, () => (ran.push("s0"), 0));
        await ctx.step("s1", {}, async () => {
          ran.push("s1");
          // Hold the run's row so this step's `completed` write waits in the server, then kill that backend.
          const operator = await holdTransaction(cluster.url, [["SELECT 1 FROM phasekit_runs WHERE namespace = $1 AND slug = $2 FOR UPDATE", [ns, "terminated"]]]);
          void (async () => {
            for (;;) {
              const r = await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1", [operator.pid]);
              if (r.rows.length > 0) {
                for (const { pid } of r.rows) terminated += (await admin.query("SELECT pg_terminate_backend($1)", [pid])).rowCount ?? 0;
                break;
              }
              await sleep(5);
            }
            await operator.end();
          })();
          return 1;
        });
        await ctx.step("s2", {}, () => (ran.push("s2"), 2));
        return "done";
      });
      expect(terminated).toBeGreaterThan(0);
      expect(result).toMatchObject({ status: "completed", result: "done" });
      expect(ran).toEqual(["s0", "s1", "s2"]);
      const rows = await admin.query("SELECT step_id, record->>'status' AS status FROM phasekit_steps WHERE namespace = $1 ORDER BY step_id", [ns]);
      expect(rows.rows.filter((r: { step_id: string }) => !r.step_id.startsWith("phasekit:"))).toEqual([
        { step_id: "s0", status: "completed" },
        { step_id: "s1", status: "completed" },
        { step_id: "s2", status: "completed" },
      ]);
    });
  });
}
