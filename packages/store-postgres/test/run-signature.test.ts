/**
 * The inspector's change check on PostgreSQL (`runSignature`): it changes after every kind of write to a run's
 * history (step started, completed, failed, rerun marks, commit intent and commit, journal entry, metadata, a
 * control request filed, cleared, withdrawn), stays equal while nothing is written (reads, renewals), and reads
 * no step row however many the run holds: the writes are counted (sql/007) by the statements that make them,
 * and step rows by their writer just after they land (write-count.ts, sql/008), so a step's own statement
 * neither writes nor waits for the count. Before, a commit record changed nothing it read, and every look summed
 * the xmin of every step row.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it, vi } from "vitest";
import { sampleMetadata } from "../../adapters-pi/test/helpers/metadata-fixtures.js";
import { openPostgresPlanStore, type PostgresPlanStore } from "../src/index.js";
import { RAISE_COUNT } from "../src/store/write-count.js";
import { startCluster } from "./helpers/cluster.js";
import { countingPool } from "./helpers/counting-pool.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`postgres run signature (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const namespace = `sig-${randomUUID().slice(0, 8)}`;
  const recorded = countingPool(cluster.url);
  const admin = new pg.Pool({ connectionString: cluster.url, max: 2 });
  let store!: PostgresPlanStore;
  afterAll(async () => {
    await store?.close();
    await recorded.pool.end();
    await admin.end();
    cluster.destroy();
  });
  const sig = (slug: string) => (store.runSignature as (slug: string) => Promise<string>)(slug);

  describe("postgres runSignature", () => {
    it("changes after each kind of write to the run's history, and stays equal while nothing is written", async () => {
      store = await openPostgresPlanStore({ pool: recorded.pool, namespace, leaseMs: 60_000 });
      const locked = await store.lock("w", { owner: { tool: "sig" } });
      if (!locked.ok) throw locked.error;
      const holder = locked.lock.store;
      const seen = [await sig("w")];
      const changes = async (what: string) => {
        const s = await sig("w");
        expect(seen, what).not.toContain(s);
        seen.push(s);
      };
      const unchanged = async (what: string) => expect(await sig("w"), what).toBe(seen.at(-1));
      // Step rows are counted by the holder just after they land: a reader sees the change soon, not at once.
      const changesSoon = (what: string) => vi.waitFor(() => changes(what), { timeout: 10_000, interval: 5 });

      expect((await holder.writeMetadata("w", sampleMetadata("w", 0), null)).ok).toBe(true);
      await changes("metadata written");
      const cps = await holder.checkpoints("w", { now: () => new Date() });
      let inBody!: () => void;
      const entered = new Promise<void>((r) => (inBody = r));
      let letGo!: () => void;
      const gate = new Promise<void>((r) => (letGo = r));
      const step = cps.step("a", {}, async () => (inBody(), await gate, 1));
      await entered;
      // With a fresh lease the body starts as its `started` record is sent: readers see it once it lands.
      await vi.waitFor(() => changes("a step started"), { timeout: 30_000, interval: 10 });
      letGo();
      await step;
      await changesSoon("a step completed");
      await expect(cps.step("b", {}, () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
      await changesSoon("a step failed");
      await cps.recordCommitIntent({ id: "c1", message: "m", files: ["x"] });
      await changes("a commit intent");
      await cps.markCommitted("c1", { sha: "abc1234" });
      await changes("a commit made");
      expect(cps.supersede).toBeDefined();
      await cps.supersede?.("a", {});
      await changesSoon("steps marked for a rerun");
      expect((await holder.appendJournal("w", { generation: 1, at: new Date().toISOString(), event: "note" })).ok).toBe(true);
      await changes("a journal entry");
      const pause = await store.requestControl("w", "pause", { reason: "look" });
      if (!pause.ok) throw pause.error;
      await changes("a pause filed");
      expect(await store.withdrawControl("w", pause.request)).toMatchObject({ ok: true, withdrawn: true });
      await changes("the pause withdrawn");
      const stop = await store.requestControl("w", "stop", { reason: "enough" });
      if (!stop.ok) throw stop.error;
      await changes("a stop filed");
      expect(await holder.clearControl("w", stop.request)).toMatchObject({ ok: true, cleared: true });
      await changes("the stop cleared");

      // Reads and renewals write nothing a reader shows.
      await cps.records();
      await cps.commits();
      await store.readJournal("w");
      await store.readMetadata("w");
      await store.readControl("w");
      await store.listRunFacts?.();
      await unchanged("reads");
      await admin.query("UPDATE phasekit_runs SET lease_until = lease_until + interval '1 minute' WHERE namespace = $1 AND slug = 'w'", [namespace]);
      await unchanged("a renewal");
      await unchanged("asked again");
      await locked.lock.release();
      await changes("the holder gone");
    });

    it("steps in parallel on one run all land, each write counted once (the count's own row: no lock upgrade on the run row)", async () => {
      const locked = await store.lock("par", { owner: { tool: "sig" } });
      if (!locked.ok) throw locked.error;
      const count = async () => Number((await admin.query("SELECT writes FROM phasekit_run_writes WHERE namespace = $1 AND slug = 'par'", [namespace])).rows[0]?.writes);
      const before = await count();
      const cps = await locked.lock.store.checkpoints("par", { now: () => new Date() });
      const outs = await Promise.all(Array.from({ length: 16 }, (_, i) => cps.step(`p${i}`, { i }, () => ({ i }))));
      expect(outs.map((o) => o.reused)).toEqual(Array(16).fill(false));
      // A completed record per step, and its started record unless that one reached the table after the
      // completion (sent beside the body while the lease is fresh), where the guard leaves the row as it is.
      // Counted just after they land: every completion, and the started records that were sent.
      await vi.waitFor(async () => expect((await count()) - before).toBeGreaterThanOrEqual(16), { timeout: 10_000, interval: 5 });
      await locked.lock.release();
      await store.close();
      const counted = (await count()) - before;
      expect(counted).toBeLessThanOrEqual(32);
      const rows = await admin.query("SELECT record->>'status' AS status FROM phasekit_steps WHERE namespace = $1 AND slug = 'par'", [namespace]);
      expect(rows.rows.map((r: { status: string }) => r.status)).toEqual(Array(16).fill("completed"));
    });

    it("a step's statement neither writes nor waits for the count: with the count's row locked the step lands; the raise that failed meanwhile is sent again by close", async () => {
      // A pool of your own takes its settings from you: lock waits bounded here as the store's own pool bounds them.
      const pool = new pg.Pool({ connectionString: cluster.url, max: 4, options: "-c lock_timeout=200" });
      // The raise's failure, seen where it happens (the store swallows it and counts those writes with the next raise).
      let raiseFailed!: () => void;
      const failed = new Promise<void>((r) => (raiseFailed = r));
      const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
      (pool as unknown as { query: typeof query }).query = (...args: unknown[]) => {
        const sent = query(...args);
        if ((args[0] as { name?: string })?.name === RAISE_COUNT.name) sent.catch(() => raiseFailed());
        return sent;
      };
      const own = await openPostgresPlanStore({ pool, namespace, leaseMs: 60_000 });
      const count = async () => Number((await admin.query("SELECT writes FROM phasekit_run_writes WHERE namespace = $1 AND slug = 'locked'", [namespace])).rows[0]?.writes);
      const blocker = await admin.connect();
      try {
        const locked = await own.lock("locked", { owner: { tool: "sig" } });
        if (!locked.ok) throw locked.error;
        const cps = await locked.lock.store.checkpoints("locked", { now: () => new Date() });
        const before = await count();
        await blocker.query("BEGIN");
        await blocker.query("SELECT writes FROM phasekit_run_writes WHERE namespace = $1 AND slug = 'locked' FOR UPDATE", [namespace]);
        // Before schema 8 the step's own statement raised the count: it waited for this lock and failed at lockMs.
        expect(await cps.step("x", {}, () => 1)).toMatchObject({ output: 1, reused: false });
        await failed;
        await blocker.query("ROLLBACK");
        await locked.lock.release();
        await own.close();
        expect((await count()) - before).toBe(1);
      } finally {
        await blocker.query("ROLLBACK").catch(() => undefined);
        blocker.release();
        await own.close();
        await pool.end();
      }
    });

    it("a run of 10,000 steps: the statement reads no step row (its plan names no step table, and a few pages)", async () => {
      const slug = "big";
      const locked = await store.lock(slug, { owner: { tool: "sig" } });
      if (!locked.ok) throw locked.error;
      await locked.lock.release();
      const before = await sig(slug);
      const record = `jsonb_build_object('v', 1, 'kind', 'step', 'stepId', 's' || i, 'status', 'completed', 'attempt', 1, 'inputFingerprint', 'sha256:' || repeat('0', 64), 'outputFingerprint', 'sha256:' || repeat('1', 64), 'startedAt', '2026-01-01T00:00:00.000Z', 'finishedAt', '2026-01-01T00:00:01.000Z')`;
      const inserted = await admin.query(
        `INSERT INTO phasekit_steps (namespace, slug, step_id, record, epoch, first_started) SELECT $1, $2, 's' || i, ${record}, 1, '2026-01-01T00:00:00.000Z' FROM generate_series(1, 10000) i`,
        [namespace, slug],
      );
      expect(inserted.rowCount).toBe(10_000);
      await admin.query("ANALYZE phasekit_steps");
      // Step rows written by hand are not counted (sql/008): the next counted write shows them.
      expect(await sig(slug)).toBe(before);
      expect((await store.appendJournal(slug, { generation: 1, at: new Date().toISOString(), event: "note" })).ok).toBe(true);
      const after = await sig(slug);
      expect(after).not.toBe(before);
      const { text, values } = recorded.sent.at(-1)!;
      const plan = (await admin.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, values)).rows[0]["QUERY PLAN"][0];
      expect(JSON.stringify(plan)).not.toContain("phasekit_steps");
      const pages = (n: Record<string, unknown>): number =>
        Number(n["Shared Hit Blocks"] ?? 0) + Number(n["Shared Read Blocks"] ?? 0);
      // Two primary-key probes: a handful of pages, where summing the step rows touched hundreds.
      expect(pages(plan.Plan)).toBeLessThan(20);
    });
  });
}
