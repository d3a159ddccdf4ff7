/**
 * A holder paused between its `started` acknowledgement and its step's body (SIGSTOP, a frozen VM, a starved
 * event loop) past its lease, while another holder takes the run: it must not start the body when it wakes.
 * The fault-injection test saw it once (a step run again after another machine had acknowledged it); here the
 * pause is made exact: the event loop is blocked right after the `started` statement's reply, and the takeover
 * happens meanwhile in another process (psql), as another machine's would.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { sampleMetadata } from "../../adapters-pi/test/helpers/metadata-fixtures.js";
import { openPostgresPlanStore } from "../src/index.js";
import { psqlSync, startCluster } from "./helpers/cluster.js";

const started = startCluster();
const LEASE_MS = 400;

/** Blocks this thread for `ms` (no timer, no I/O runs meanwhile). */
const freeze = (ms: number): void => void Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

if (!started.ok) {
  describe.skip(`postgres paused holder (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  afterAll(() => cluster.destroy());

  describe("a holder paused after its `started` acknowledgement", () => {
    it("does not run the step's body once another holder has taken the run meanwhile (LOCK_LOST, body never called)", async () => {
      const ns = `p-${randomUUID()}`;
      const pool = new pg.Pool({ connectionString: cluster.url, max: 4 });
      let pauseNext = false;
      // The `started` statement (committed without waiting for the WAL flush) resolves, then the process stands
      // still past the lease while the run is taken over: the moment just before the body would start.
      const paused = new Proxy(pool, {
        get(target, key) {
          if (key === "query") {
            return async (q: unknown, values?: unknown) => {
              const text = typeof q === "string" ? q : (q as { text?: string }).text;
              const result = await target.query(q as never, values as never);
              if (pauseNext && text?.includes("synchronous_commit', 'off'")) {
                pauseNext = false;
                freeze(LEASE_MS + 300);
                psqlSync(cluster.port, `UPDATE phasekit_runs SET epoch = epoch + 1, holder = 'other-machine', lease_until = now() + interval '30 seconds' WHERE namespace = '${ns}' AND slug = 'run'`);
              }
              return result;
            };
          }
          const v = Reflect.get(target, key, target) as unknown;
          return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      });
      const store = await openPostgresPlanStore({ pool: paused, namespace: ns, leaseMs: LEASE_MS });
      try {
        const got = await store.lock("run", { owner: { tool: "a" } });
        if (!got.ok) throw got.error;
        await got.lock.store?.writeMetadata("run", sampleMetadata("run", 0), null);
        const cps = await (got.lock.store ?? store).checkpoints("run", { now: () => new Date() });
        // A step before the pause runs as usual.
        expect(await cps.step("first", {}, () => 1)).toMatchObject({ reused: false, output: 1 });
        pauseNext = true;
        let ran = 0;
        await expect(cps.step("work", {}, () => ++ran)).rejects.toMatchObject({ code: "LOCK_LOST" });
        expect(pauseNext).toBe(false);
        expect(ran).toBe(0);
      } finally {
        await store.close();
        await pool.end();
      }
    });
  });
}
