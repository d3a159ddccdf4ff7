/**
 * A run deleted by a transaction whose snapshot is older than a step of it (schema 10's delete trigger, in place
 * of the foreign keys' cascade): no step row may be left without its run. In READ COMMITTED each statement of
 * the trigger reads the rows committed before it; in REPEATABLE READ it reads the transaction's snapshot, so the
 * delete is refused (40001, as the foreign key's cascade did) when a transaction committed since that snapshot.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { startCluster } from "./helpers/cluster.js";
import { failure } from "./helpers/failure.js";
import { storeSetup } from "./helpers/stores.js";
import { STEP_WRITES } from "../src/store/step-writes.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`postgres run delete snapshot (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const { open, admin } = storeSetup(cluster, { leaseMs: 60_000, adminMax: 3 });

  /** Rows of `slug` in `ns` left without their run (0 when the run is there, or went with all of them). */
  const orphans = async (ns: string, slug: string): Promise<number> => {
    const r = await admin.query<{ n: number }>(
      `SELECT CASE WHEN EXISTS (SELECT 1 FROM phasekit_runs WHERE namespace = $1 AND slug = $2) THEN 0
              ELSE (SELECT count(*) FROM phasekit_steps WHERE namespace = $1 AND slug = $2)::int + (SELECT count(*) FROM phasekit_artifacts WHERE namespace = $1 AND slug = $2)::int END AS n`,
      [ns, slug],
    );
    return r.rows[0]!.n;
  };

  /** Deletes run `slug` of `ns` in a transaction at `isolation` whose snapshot is taken before the run's step "b" is written. */
  /** A namespace holding run "run" with its step "a" done, its lease released. */
  const runWithOneStep = async (): Promise<string> => {
    const ns = `snap-${randomUUID()}`;
    const store = await open(ns);
    const l = await store.lock("run", { owner: { tool: "snapshot" } });
    if (!l.ok) throw l.error;
    const cps = await l.lock.store.checkpoints("run", { now: () => new Date() });
    await cps.step("a", {}, () => ({ a: 1 }));
    // Released: a writer holding no lease may write the run's steps now (its fence: no live holder).
    await l.lock.release();
    return ns;
  };

  const deleteWithOlderSnapshot = async (isolation: "READ COMMITTED" | "REPEATABLE READ"): Promise<number> => {
    const ns = await runWithOneStep();
    const operator = await admin.connect();
    try {
      await operator.query(`BEGIN ISOLATION LEVEL ${isolation}`);
      await operator.query("SELECT count(*) FROM phasekit_steps WHERE namespace = $1", [ns]);
      // Written and committed after the operator's snapshot, by the store's own statement, fenced for no holder.
      const b = { stepId: "b", status: "started", startedAt: new Date().toISOString(), attempt: 1, inputFingerprint: "x" };
      const wrote = await admin.query<{ fenced: string }>(STEP_WRITES.record.text, [ns, "run", null, null, "b", JSON.stringify(b)]);
      expect(wrote.rows[0]?.fenced).toBe("1");
      const refused = await failure(operator.query("DELETE FROM phasekit_runs WHERE namespace = $1 AND slug = 'run'", [ns]));
      if (isolation === "REPEATABLE READ") expect(refused).toMatchObject({ code: "40001" });
      await operator.query(refused === null ? "COMMIT" : "ROLLBACK");
    } finally {
      operator.release();
    }
    return orphans(ns, "run");
  };

  describe("postgres: a run deleted by a transaction with an older snapshot", () => {
    it("READ COMMITTED: the step written after the snapshot goes with its run", async () => {
      expect(await deleteWithOlderSnapshot("READ COMMITTED")).toBe(0);
    });

    it("REPEATABLE READ: the step written after the snapshot goes with its run, or the delete is refused (40001)", async () => {
      expect(await deleteWithOlderSnapshot("REPEATABLE READ")).toBe(0);
    });

    it("REPEATABLE READ with nothing committed since its snapshot: the run goes, with its steps and artifacts", async () => {
      const ns = await runWithOneStep();
      const operator = await admin.connect();
      try {
        await operator.query("BEGIN ISOLATION LEVEL REPEATABLE READ");
        expect((await operator.query("DELETE FROM phasekit_runs WHERE namespace = $1 AND slug = 'run'", [ns])).rowCount).toBe(1);
        await operator.query("COMMIT");
      } finally {
        operator.release();
      }
      const left = await admin.query<{ n: number }>("SELECT (SELECT count(*) FROM phasekit_steps WHERE namespace = $1)::int + (SELECT count(*) FROM phasekit_artifacts WHERE namespace = $1)::int AS n", [ns]);
      expect(left.rows[0]?.n).toBe(0);
    });
  });
}
