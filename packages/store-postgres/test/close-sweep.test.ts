/**
 * A store's close() at each moment that matters, once and twice at once, on a pool of yours whose every statement
 * is recorded: while a step statement is in flight (held on the run's row), while a raise of the write count is
 * in flight (held before it reaches the server), while a raise is blocked by a row lock on the count's row, and
 * while the pool is partitioned (a paused TCP proxy that holds goodbyes too), yours or the store's own (then what
 * is sent is seen at the proxy: no new connection and no byte after the close). In each: close() returns while
 * the hold is still on (the store's bound, db/in-doubt.ts), no statement is sent after it returned (what the hold
 * released settles, and nothing follows it), every step acknowledged is in the history, and a new store resumes
 * the run from it. Before, close() on a pool of yours waited for each hold to end; on its own pool, a statement
 * its close cut was sent again on the store's next pool, through the partition.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type pg from "pg";
import { describe, expect, it, vi } from "vitest";
import { openPostgresPlanStore, type PostgresPlanStore } from "../src/index.js";
import { COUNT_WINDOW_MS } from "../src/store/write-count.js";
import { startCluster } from "./helpers/cluster.js";
import { countingPool, type CountingPool } from "./helpers/counting-pool.js";
import { storeSetup } from "./helpers/stores.js";
import { startTcpProxy, type TcpProxy } from "./helpers/tcp-proxy.js";

const started = startCluster();

const MOMENTS = ["a step statement in flight", "a raise in flight", "a raise blocked by a row lock on the count", "the pool partitioned", "the store's own pool partitioned"] as const;
type Moment = (typeof MOMENTS)[number];

type Settled = { ok: true; output: unknown } | { ok: false; error: unknown };

if (!started.ok) {
  describe.skip(`postgres close sweep (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const { open, admin, expire } = storeSetup(cluster, { adminMax: 4 });

  const waitForLockOn = (table: string) =>
    vi.waitFor(
      async () => {
        const r = await admin.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%${table}%' AND query NOT LIKE '%pg_stat_activity%'`);
        expect(r.rows[0].n).toBe(1);
      },
      { timeout: 10_000, interval: 10 },
    );

  /** Holds `sql` (a row lock) in a transaction of its own until the returned release. */
  async function holdRow(sql: string, ns: string): Promise<() => Promise<void>> {
    const c: pg.PoolClient = await admin.connect();
    await c.query("BEGIN");
    await c.query(sql, [ns]);
    return async () => {
      await c.query("ROLLBACK");
      c.release();
    };
  }

  /** Brings the store to `moment` with step s1 sent; returns what ends the hold. */
  async function reach(moment: Moment, ns: string, store: PostgresPlanStore, counting: CountingPool, proxy: TcpProxy | undefined, steps: Map<string, Promise<Settled>>) {
    const locked = await store.lock("run", { owner: { tool: "sweep" } });
    if (!locked.ok) throw locked.error;
    const cps = await locked.lock.store.checkpoints("run", { now: () => new Date() });
    const step = (key: string, output: number): Promise<Settled> => {
      const p = cps.step(key, {}, () => output).then(
        (r) => ({ ok: true as const, output: r.output }),
        (error: unknown) => ({ ok: false as const, error }),
      );
      steps.set(key, p);
      return p;
    };
    expect(await step("s0", 0)).toMatchObject({ ok: true });
    // s0's raise has landed: nothing of it is pending when the moment comes.
    await vi.waitFor(async () => expect((await admin.query("SELECT writes FROM phasekit_run_writes WHERE namespace = $1", [ns])).rows[0]?.writes).toBe("1"), { timeout: 10_000, interval: 10 });
    switch (moment) {
      case "a step statement in flight": {
        const letGo = await holdRow("SELECT 1 FROM phasekit_runs WHERE namespace = $1 AND slug = 'run' FOR UPDATE", ns);
        void step("s1", 1);
        await waitForLockOn("phasekit_steps");
        return letGo;
      }
      case "a raise in flight": {
        counting.holdRaises();
        expect(await step("s1", 1)).toMatchObject({ ok: true });
        await vi.waitFor(() => expect(counting.heldRaises).toBe(1), { timeout: 10_000, interval: 5 });
        return async () => counting.releaseRaises();
      }
      case "a raise blocked by a row lock on the count": {
        const letGo = await holdRow("SELECT 1 FROM phasekit_run_writes WHERE namespace = $1 AND slug = 'run' FOR UPDATE", ns);
        expect(await step("s1", 1)).toMatchObject({ ok: true });
        await waitForLockOn("phasekit_run_writes");
        return letGo;
      }
      case "the pool partitioned":
      case "the store's own pool partitioned": {
        proxy?.pause();
        void step("s1", 1);
        await vi.waitFor(() => expect(proxy?.holding).toBeGreaterThan(0), { timeout: 10_000, interval: 5 });
        return async () => proxy?.resume();
      }
    }
  }

  describe("postgres: close() at each moment", () => {
    for (const moment of MOMENTS) {
      for (const closes of [1, 2]) {
        it(`${moment}, ${closes === 1 ? "one close" : "two closes at once"}: it returns, sends nothing after, and the run resumes from its history`, async () => {
          const ns = `sweep-${randomUUID().slice(0, 8)}`;
          const own = moment === "the store's own pool partitioned";
          const proxy = moment.endsWith("partitioned") ? await startTcpProxy(cluster.port, { holdEnds: true }) : undefined;
          const url = proxy === undefined ? cluster.url : `postgres://phasekit@127.0.0.1:${proxy.port}/phasekit`;
          const counting = countingPool(url, 4, { raises: true });
          counting.pool.on("error", () => undefined);
          // A long lease: nothing here runs out while the hold is on; the close's bound comes from it (a quarter, at most 0.5 s).
          const store = await openPostgresPlanStore({ ...(own ? { connectionString: url } : { pool: counting.pool }), namespace: ns, leaseMs: 60_000 });
          const steps = new Map<string, Promise<Settled>>();
          let letGo: (() => Promise<void>) | undefined;
          try {
            letGo = await reach(moment, ns, store, counting, proxy, steps);
            const closing = Promise.all(Array.from({ length: closes }, () => store.close()));
            const returned = await Promise.race([closing.then(() => true), sleep(10_000).then(() => false)]);
            expect(returned, "close() did not return while the hold was on").toBe(true);
            const sentBefore = counting.sent.length;
            if (own && proxy !== undefined) {
              const [accepted, holding] = [proxy.accepted, proxy.holding];
              await sleep(5 * COUNT_WINDOW_MS);
              expect([proxy.accepted, proxy.holding], "connections and chunks sent into the partition after close() returned").toEqual([accepted, holding]);
            }
            await letGo();
            letGo = undefined;
            const settled = await Promise.all([...steps.values()]);
            // A raise sent late would go out within a window of what it counts: give it several.
            await sleep(5 * COUNT_WINDOW_MS);
            expect(counting.sent.slice(sentBefore).map((s) => s.name ?? s.text.slice(0, 60))).toEqual([]);
            expect(settled[0]).toMatchObject({ ok: true, output: 0 });

            // The history: every step acknowledged is reused with its output by a new store on the run.
            await expire(ns, "run");
            const again = await open(ns, { leaseMs: 60_000 });
            const relocked = await again.lock("run", { owner: { tool: "sweep-again" } });
            if (!relocked.ok) throw relocked.error;
            const cps = await relocked.lock.store.checkpoints("run", { now: () => new Date() });
            const keys = [...steps.keys()];
            for (const [i, key] of keys.entries()) {
              const first = settled[i] as Settled;
              const resumed = await cps.step(key, {}, () => `${key} again`);
              // Not acknowledged: it landed (reused, its output i) or not (run again).
              if (first.ok) expect(resumed, `${key} was acknowledged`).toMatchObject({ output: first.output, reused: true });
              else expect([`${key} again`, i]).toContain(resumed.output as unknown);
            }
            await relocked.lock.release();
          } finally {
            await letGo?.();
            await counting.pool.end();
            await proxy?.close();
          }
        });
      }
    }
  });
}
