/**
 * `compact()` racing a step whose output is stored as a delta (output-chain.ts): the delta's base was the holder's
 * last output, unreferenced by then (its step started again); the compaction got the run row before the step's
 * statement did. The acknowledged step must still be reused afterwards: compaction never deletes a base a
 * delta written by this holder needs.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sampleMetadata } from "../../adapters-pi/test/helpers/metadata-fixtures.js";
import { startCluster } from "./helpers/cluster.js";
import { storeSetup } from "./helpers/stores.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`postgres compaction racing a delta (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const { open, admin } = storeSetup(cluster, { adminMax: 3 });

  /** Resolves once a statement whose text contains `marker` waits on a lock (polled, no clock). */
  const blockedOn = async (marker: string): Promise<void> => {
    for (;;) {
      const r = await admin.query("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1", [`%${marker}%`]);
      if (r.rowCount !== null && r.rowCount > 0) return;
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  const opened = () => {
    let open!: () => void;
    const promise = new Promise<void>((r) => (open = r));
    return { open, promise };
  };

  describe("postgres compaction racing a delta write", () => {
    it("keeps the base of a delta whose statement reached the run row after the compaction", async () => {
      const ns = `delta-race-${randomUUID()}`;
      const store = await open(ns);
      const l = await store.lock("run", { owner: { tool: "race" } });
      if (!l.ok) throw l.error;
      const holder = l.lock.store;
      await holder.writeMetadata("run", sampleMetadata("run", 0), null);
      const cps = await holder.checkpoints("run", { now: () => new Date() });
      const big = "x".repeat(4000);
      // s's output is stored whole: the holder's next output is a delta on it.
      await cps.step("s", { x: 1 }, () => ({ big, n: 1 }));
      // s starts again (a new input): its `started` record leaves that output unreferenced; its body waits.
      const sGate = opened();
      const sInside = opened();
      const sRerun = cps.step("s", { x: 2 }, async () => (sInside.open(), await sGate.promise, { other: 1 }));
      await sInside.promise;
      // t starts, and its body waits until another session holds the steps table in SHARE mode.
      const tGate = opened();
      const tInside = opened();
      const tRun = cps.step("t", { y: 1 }, async () => (tInside.open(), await tGate.promise, { big, n: 2 }));
      await tInside.promise;
      const blocker = await admin.connect();
      try {
        await blocker.query("BEGIN");
        await blocker.query("LOCK TABLE phasekit_steps IN SHARE MODE");
        // t's completion (a delta on s's first output) waits for the table, before it reaches the run row.
        tGate.open();
        await blockedOn("INSERT INTO phasekit_steps");
        // The compaction may go first: it takes the run row and commits unless it waits for t's statement. The
        // blocker lets go once the compaction settled or had 50 round trips of this test's own to do so (a
        // compaction that waits for t never settles before, so the result does not depend on that bound).
        const compaction = cps.compact();
        const settled = compaction.then(() => undefined, () => undefined);
        for (let i = 0; i < 50; i++) if ((await Promise.race([settled.then(() => true), admin.query("SELECT 1").then(() => false)])) === true) break;
        await blocker.query("COMMIT");
        await compaction;
      } finally {
        blocker.release();
      }
      expect(await tRun).toMatchObject({ reused: false, record: { status: "completed" } });
      sGate.open();
      await sRerun;
      await l.lock.release();
      // A later holder reuses t: its output is still whole.
      const l2 = await store.lock("run", { owner: { tool: "race" } });
      if (!l2.ok) throw l2.error;
      const again = await (await l2.lock.store.checkpoints("run", { now: () => new Date() })).step("t", { y: 1 }, () => ({ ran: "again" }));
      await l2.lock.release();
      expect(again).toMatchObject({ reused: true, output: { big, n: 2 } });
    }, 30_000);
  });
}
