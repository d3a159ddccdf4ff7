/**
 * A holder that stood still past its lease (SIGSTOP, a frozen VM, a starved event loop) while another holder took
 * the run must not start a step's body when it wakes. The fault-injection test saw it once (a step run again
 * after another machine had acknowledged it); here the pause is made exact: the event loop is blocked past the
 * lease, the takeover happens meanwhile in another process (psql), as another machine's would, and the step is
 * called the moment the holder wakes, before any timer of it (the heartbeat) has run. Its lease looked fresh
 * before the pause, so only the holder's own clocks (both moved on) can stop the body: the `started` record is
 * then awaited, and refused.
 */
import { randomUUID } from "node:crypto";
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

  describe("a holder woken after standing still past its lease", () => {
    it("does not run the step's body once another holder has taken the run meanwhile (LOCK_LOST, body never called)", async () => {
      const ns = `p-${randomUUID()}`;
      const store = await openPostgresPlanStore({ connectionString: cluster.url, namespace: ns, leaseMs: LEASE_MS });
      try {
        const got = await store.lock("run", { owner: { tool: "a" } });
        if (!got.ok) throw got.error;
        await got.lock.store?.writeMetadata("run", sampleMetadata("run", 0), null);
        const cps = await (got.lock.store ?? store).checkpoints("run", { now: () => new Date() });
        // A step before the pause runs as usual (its lease fresh: the body starts at once).
        expect(await cps.step("first", {}, () => 1)).toMatchObject({ reused: false, output: 1 });
        let ran = 0;
        freeze(LEASE_MS + 300);
        psqlSync(cluster.port, `UPDATE phasekit_runs SET epoch = epoch + 1, holder = 'other-machine', lease_until = now() + interval '30 seconds' WHERE namespace = '${ns}' AND slug = 'run'`);
        const work = cps.step("work", {}, () => ++ran);
        await expect(work).rejects.toMatchObject({ code: "LOCK_LOST" });
        expect(ran).toBe(0);
      } finally {
        await store.close();
      }
    });
  });
}
