/**
 * Step outputs stored as deltas on PostgreSQL (output-chain.ts, the fs store's codec): a run of changing
 * outputs stores most of them as small deltas and hands every one back exactly on reuse; a row edited or
 * removed by hand in the middle of a chain makes the steps whose chain passes it rerun, never hand out a wrong
 * output; compaction keeps every base a kept output needs.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { describe, expect, it } from "vitest";
import type { CheckpointStore } from "@phasekit/adapters-pi";
import { MIGRATIONS, openPostgresPlanStore } from "../src/index.js";
import { OUTPUT_CHAIN } from "../src/store/output-chain.js";
import { READ_AHEAD } from "../src/store/step-index.js";
import { MAX_CHAIN_LINKS } from "@phasekit/adapters-pi/store-kit";
import { startCluster } from "./helpers/cluster.js";
import { storeSetup } from "./helpers/stores.js";
import { countingPool } from "./helpers/counting-pool.js";

const started = startCluster();

/** A 2 KB value whose version `i` differs from version `i - 1` in one field. */
function outputAt(i: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (let k = 0; k < 20; k++) out[`k${k}`] = `${k}-`.padEnd(100, "x");
  for (let j = 0; j <= i; j++) out[`k${j % 20}`] = `changed at ${j}`;
  return out;
}

if (!started.ok) {
  describe.skip(`postgres output deltas (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const { open, admin } = storeSetup(cluster);

  /** A store on a fresh namespace and a way to take run "run" and open its checkpoints. */
  const fresh = async () => {
    const ns = `delta-${randomUUID()}`;
    const store = await open(ns);
    const hold = async (): Promise<{ cps: CheckpointStore; release: () => Promise<void> }> => {
      const l = await store.lock("run", { owner: { tool: "delta" } });
      if (!l.ok) throw l.error;
      return { cps: await l.lock.store.checkpoints("run", { now: () => new Date() }), release: async () => void (await l.lock.release()) };
    };
    const artifacts = async () => (await admin.query<{ fingerprint: string; base: string | null }>("SELECT fingerprint, base FROM phasekit_artifacts WHERE namespace = $1", [ns])).rows;
    const fpOf = async (cps: CheckpointStore, i: number) => (await cps.record(`s${i}`))?.outputFingerprint as string;
    return { ns, store, hold, artifacts, fpOf };
  };

  const write = async (cps: CheckpointStore, n: number) => {
    for (let i = 0; i < n; i++) expect(await cps.step(`s${i}`, { i }, () => outputAt(i))).toMatchObject({ reused: false });
  };
  /** Every step replayed (as a resume would): which reran, and why. */
  const replay = async (cps: CheckpointStore, n: number) => {
    const reran: Array<[number, string]> = [];
    for (let i = 0; i < n; i++) {
      const r = await cps.step(`s${i}`, { i }, () => outputAt(i));
      // Reused or rerun, what the body gets is always the right value.
      expect(r.output).toEqual(outputAt(i));
      if (!r.reused) reran.push([i, r.reason]);
    }
    return reran;
  };

  describe("postgres output deltas", () => {
    it(`changing outputs: stored as deltas (a whole value every ${OUTPUT_CHAIN + 1}), each handed back exactly after a reopen`, async () => {
      const n = 2 * (OUTPUT_CHAIN + 1) + 4;
      const { store, hold, artifacts } = await fresh();
      const a = await hold();
      await write(a.cps, n);
      const record = (await a.cps.records()).find((r) => r.stepId === `s${OUTPUT_CHAIN}`);
      await a.release();
      // A reader (the CLI, a fork) gets a delta's output whole, checked: the last of a full chain.
      const read = await store.readStepOutput?.("run", record!);
      expect(read).toMatchObject({ ok: true });
      expect(JSON.parse((read as { text: string }).text)).toEqual(outputAt(OUTPUT_CHAIN));
      const rows = await artifacts();
      expect(rows).toHaveLength(n);
      // The first output and one after every OUTPUT_CHAIN deltas are whole: 0, 65, 130 (at 64).
      expect(rows.filter((r) => r.base === null)).toHaveLength(3);
      const b = await hold();
      expect(await b.cps.records()).toHaveLength(n); // the index is in: reads take the outputs ahead
      expect(await replay(b.cps, n)).toEqual([]);
      await b.release();
      // Out of order and before the index is in (each step read with its chain in one statement).
      const c = await hold();
      for (const i of [n - 1, 3, OUTPUT_CHAIN, 0, OUTPUT_CHAIN + 1, 2 * OUTPUT_CHAIN + 1, 34]) expect(await c.cps.step(`s${i}`, { i }, () => "ran")).toMatchObject({ reused: true, output: outputAt(i) });
      await c.release();
    });

    it("the readers' bound is twice the longest chain a holder writes", () => {
      expect(MAX_CHAIN_LINKS).toBe(2 * OUTPUT_CHAIN);
    });

    it("the last output of a full chain, read out of order by a fresh holder, costs one statement (the chain comes with it)", async () => {
      const { ns, hold } = await fresh();
      const a = await hold();
      await write(a.cps, OUTPUT_CHAIN + 1);
      await a.release();
      const { pool, texts } = countingPool(cluster.url, 2);
      const store = await openPostgresPlanStore({ pool, namespace: ns });
      try {
        const l = await store.lock("run", { owner: { tool: "delta" } });
        if (!l.ok) throw l.error;
        const cps = await l.lock.store.checkpoints("run", { now: () => new Date() });
        texts.length = 0;
        const i = OUTPUT_CHAIN;
        expect(await cps.step(`s${i}`, { i }, () => "ran")).toMatchObject({ reused: true, output: outputAt(i) });
        expect(texts.filter((t) => t.includes("phasekit_artifacts"))).toHaveLength(1);
        await l.lock.release();
      } finally {
        await store.close();
        await pool.end();
      }
    });

    it("a delta edited by hand in the middle of a chain: it and the outputs after it on its chain rerun, the rest is reused", async () => {
      const { ns, hold, fpOf } = await fresh();
      const n = OUTPUT_CHAIN + 8;
      const a = await hold();
      await write(a.cps, n);
      // Ops that apply cleanly but give another value: only the fingerprint check can tell.
      const edited = await admin.query(`UPDATE phasekit_artifacts SET body = '[[["k3"],"evil"]]' WHERE namespace = $1 AND fingerprint = $2 AND base IS NOT NULL`, [ns, await fpOf(a.cps, 20)]);
      expect(edited.rowCount).toBe(1);
      await a.release();
      const b = await hold();
      // Outputs 20…OUTPUT_CHAIN chain through the edited row. With the index in, s0's read takes the outputs of
      // the next READ_AHEAD steps too, before any rerun: 20…READ_AHEAD come back corrupt and rerun. 20's rerun
      // replaces the edited row whole, so the chain has healed when the next read takes the outputs after them.
      expect(await b.cps.records()).toHaveLength(n);
      expect(await replay(b.cps, n)).toEqual(Array.from({ length: READ_AHEAD - 19 }, (_, k) => [20 + k, "artifact-corrupt"]));
      await b.release();
      const c = await hold();
      expect(await replay(c.cps, n)).toEqual([]);
      await c.release();
    });

    it("a base removed by hand: the outputs whose chain needs it rerun as artifact-missing", async () => {
      const { ns, hold, fpOf } = await fresh();
      const a = await hold();
      await write(a.cps, 10);
      const removed = await admin.query("DELETE FROM phasekit_artifacts WHERE namespace = $1 AND fingerprint = $2", [ns, await fpOf(a.cps, 4)]);
      expect(removed.rowCount).toBe(1);
      await a.release();
      const b = await hold();
      // The index in: one read takes every output before any rerun (else 4's rerun, storing it again whole, heals
      // the chain for the outputs read after it, and which those are depends on when the index came in).
      expect(await b.cps.records()).toHaveLength(10);
      expect(await replay(b.cps, 10)).toEqual([4, 5, 6, 7, 8, 9].map((i) => [i, "artifact-missing"]));
      await b.release();
    });

    it("outputs written before version 5 (no base column) are read whole after the migration, and new ones chain on", async () => {
      // A step record and its output as a current store writes them (whole: the first output of a chain). After
      // the migration the holder reuses it, stores s1 whole (the first output of its chain) and s2 as a delta.
      const { ns, hold } = await fresh();
      const a = await hold();
      await write(a.cps, 1);
      await a.release();
      const step = (await admin.query("SELECT step_id, record, epoch FROM phasekit_steps WHERE namespace = $1", [ns])).rows[0];
      const artifact = (await admin.query("SELECT fingerprint, body FROM phasekit_artifacts WHERE namespace = $1", [ns])).rows[0];
      const db = `mig_${randomUUID().replaceAll("-", "")}`;
      await admin.query(`CREATE DATABASE ${db}`);
      const pool = new pg.Pool({ connectionString: cluster.url.replace(/\/phasekit$/, `/${db}`), max: 2 });
      try {
        for (const m of MIGRATIONS.slice(0, 4)) await pool.query(m.sql);
        await pool.query("INSERT INTO phasekit_runs (namespace, slug) VALUES ('default', 'run')");
        await pool.query("INSERT INTO phasekit_steps VALUES ('default', 'run', $1, $2, $3)", [step.step_id, step.record, step.epoch]);
        await pool.query("INSERT INTO phasekit_artifacts VALUES ('default', 'run', $1, $2)", [artifact.fingerprint, artifact.body]);
        const store = await openPostgresPlanStore({ pool, migrate: true });
        expect(store.migrations.applied).toEqual(MIGRATIONS.slice(4).map((m) => m.version));
        const l = await store.lock("run", { owner: { tool: "delta" } });
        if (!l.ok) throw l.error;
        const cps = await l.lock.store.checkpoints("run", { now: () => new Date() });
        expect(await replay(cps, 3)).toEqual([[1, "no-record"], [2, "no-record"]]);
        await l.lock.release();
        await store.close();
        expect((await pool.query("SELECT base IS NULL AS whole FROM phasekit_artifacts ORDER BY whole DESC")).rows.map((r) => r.whole)).toEqual([true, true, false]);
      } finally {
        await pool.end();
      }
    });

    it("compaction keeps a base no step names any more, and removes an output nothing needs", async () => {
      const { hold, artifacts, fpOf } = await fresh();
      const a = await hold();
      await write(a.cps, 12);
      const old5 = await fpOf(a.cps, 5);
      const old11 = await fpOf(a.cps, 11);
      // s5 and s11 run again with another input: their old outputs are named by no step; s6's delta is based on
      // old s5, and nothing is based on old s11 (the last of the chain).
      for (const i of [5, 11]) expect(await a.cps.step(`s${i}`, { i, again: true }, () => ({ again: i }))).toMatchObject({ reused: false, reason: "input-changed" });
      expect((await a.cps.compact()).artifactsRemoved).toBe(1);
      const left = (await artifacts()).map((r) => r.fingerprint);
      expect(left).toContain(old5);
      expect(left).not.toContain(old11);
      // The holder goes on writing after its compaction (its next output starts a new chain).
      expect(await a.cps.step("s12", { i: 12 }, () => outputAt(12))).toMatchObject({ reused: false });
      await a.release();
      const b = await hold();
      for (const i of [0, 4, 6, 7, 10, 12]) expect(await b.cps.step(`s${i}`, { i }, () => "ran")).toMatchObject({ reused: true, output: outputAt(i) });
      for (const i of [5, 11]) expect(await b.cps.step(`s${i}`, { i, again: true }, () => "ran")).toMatchObject({ reused: true, output: { again: i } });
      await b.release();
    });
  });
}
