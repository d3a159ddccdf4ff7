/**
 * `compact()` racing a step: a compaction whose statement started before a step's completion committed, but got
 * the run row only after it, must still see that completion (it used to delete the acknowledged output).
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sampleMetadata } from "../../adapters-pi/test/helpers/metadata-fixtures.js";
import { startCluster } from "./helpers/cluster.js";
import { storeSetup } from "./helpers/stores.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`postgres compaction race (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const { open, admin } = storeSetup(cluster, { adminMax: 3 });

  /** Resolves once a statement of this database whose text contains `marker` waits on a lock (polled, no clock). */
  const blockedOn = async (marker: string): Promise<void> => {
    for (;;) {
      const r = await admin.query("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1", [`%${marker}%`]);
      if (r.rowCount !== null && r.rowCount > 0) return;
      await new Promise((resolve) => setImmediate(resolve));
    }
  };

  describe("postgres compaction racing a step", () => {
    it("keeps the output of a step acknowledged while the compaction waited for the run row", async () => {
      const ns = `race-${randomUUID()}`;
      const store = await open(ns);
      const l = await store.lock("run", { owner: { tool: "race" } });
      if (!l.ok) throw l.error;
      const holder = l.lock.store;
      await holder.writeMetadata("run", sampleMetadata("run", 0), null);
      const cps = await holder.checkpoints("run", { now: () => new Date() });
      await cps.step("s", { x: 1 }, () => ({ same: "output" }));
      // The step runs again with a new input: its `started` record leaves the stored output unreferenced.
      let finish!: () => void;
      const gate = new Promise<void>((r) => (finish = r));
      let entered!: () => void;
      const inside = new Promise<void>((r) => (entered = r));
      const rerun = cps.step("s", { x: 2 }, async () => (entered(), await gate, { same: "output" }));
      await inside;
      // Another session share-locks the run row: the compaction's statement starts, then waits for the row.
      const blocker = await admin.connect();
      try {
        await blocker.query("BEGIN");
        await blocker.query("SELECT 1 FROM phasekit_runs WHERE namespace = $1 AND slug = 'run' FOR SHARE", [ns]);
        const compaction = cps.compact();
        await blockedOn("FOR UPDATE");
        // Meanwhile the step completes with the same output (its artifact row already exists) and is acknowledged.
        finish();
        expect(await rerun).toMatchObject({ reused: false, reason: "input-changed", record: { status: "completed" } });
        await blocker.query("COMMIT");
        await compaction;
      } finally {
        blocker.release();
      }
      const again = await (await holder.checkpoints("run", { now: () => new Date() })).step("s", { x: 2 }, () => ({ ran: "again" }));
      expect(again).toMatchObject({ reused: true, output: { same: "output" } });
      await l.lock.release();
    });
  });
}
