/**
 * A point read reads its rows, whatever the planner knows of the tables (counted in buffers, not timed). The
 * reads of one step (its record with its output's chain, before the run's step index is in) and of the outputs
 * a hit takes (once it is in) probe each artifact by its whole primary key. Right after a long run was written
 * the tables have no statistics yet (autovacuum had not come round): a probe planned as a join then scanned every
 * artifact of the run, so the first reuse of a resumed 10,000-step run took ~20 ms instead of ~0.5.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresPlanStore, type PostgresPlanStore } from "../src/index.js";
import { startCluster } from "./helpers/cluster.js";
import { countingPool } from "./helpers/counting-pool.js";

const started = startCluster();
const STEPS = 2_000;
/**
 * A probe touches a few index and heap pages per row it reads (an output's delta chain and the outputs read
 * ahead are bounded, whatever the run's length); a scan of the run's artifacts touches thousands here.
 */
const PER_ROW_BLOCKS = 10;
const FIXED_BLOCKS = 10;

if (!started.ok) {
  describe.skip(`postgres point-read plans (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const admin = new pg.Client({ connectionString: cluster.url });
  const pools: pg.Pool[] = [];
  const stores: PostgresPlanStore[] = [];
  afterAll(async () => {
    for (const s of stores) await s.close();
    for (const p of pools) await p.end();
    await admin.end();
    cluster.destroy();
  });

  /** Buffers the statement touches when run as sent, planned for its values and as the generic plan a prepared statement settles on. */
  const blocks = async (s: { text: string; values: unknown[] }, mode: "force_custom_plan" | "force_generic_plan"): Promise<number> => {
    const literal = (v: unknown): string =>
      Array.isArray(v) ? `ARRAY[${v.map((x) => admin.escapeLiteral(String(x))).join(",")}]::text[]` : typeof v === "number" ? String(v) : admin.escapeLiteral(String(v));
    const name = `probe_${randomUUID().replaceAll("-", "")}`;
    await admin.query(`SET plan_cache_mode = ${mode}`);
    await admin.query(`PREPARE ${name} AS ${s.text}`);
    const r = await admin.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE ${name}(${s.values.map(literal).join(", ")})`);
    await admin.query(`DEALLOCATE ${name}`);
    const plan = (r.rows[0] as { "QUERY PLAN": Array<{ Plan: Record<string, number> }> })["QUERY PLAN"][0]!.Plan;
    return (plan["Shared Hit Blocks"] ?? 0) + (plan["Shared Read Blocks"] ?? 0);
  };

  /** The rows a point read brings back: the step's record and its chain, or the outputs with their chains. */
  const rowsRead = async (s: { name: string; text: string; values: unknown[] }): Promise<number> => {
    const r = await admin.query({ text: s.text, values: s.values });
    if (s.name !== "phasekit_read_step_chained") return r.rowCount ?? 0;
    return 1 + ((r.rows[0] as { chain: unknown[] | null }).chain?.length ?? 0);
  };

  describe("postgres point reads on tables with no statistics", () => {
    it(`a step's read and a hit's output read probe by key in a ${STEPS.toLocaleString("en")}-step run`, async () => {
      await admin.connect();
      // The adversary: tables never analyzed, as right after a long run was written.
      for (const t of ["phasekit_steps", "phasekit_artifacts"]) await admin.query(`ALTER TABLE ${t} SET (autovacuum_enabled = false)`);
      const rec = countingPool(cluster.url);
      pools.push(rec.pool);
      const store = await openPostgresPlanStore({ pool: rec.pool, namespace: `plans-${randomUUID()}`, leaseMs: 60_000 });
      stores.push(store);
      const first = await store.lock("run", { owner: { tool: "plans" } });
      if (!first.ok) throw first.error;
      const w = await first.lock.store.checkpoints("run", { now: () => new Date() });
      for (let i = 0; i < STEPS; i += 100) {
        await Promise.all(Array.from({ length: 100 }, (_, k) => w.step(`s${i + k}`, { i: i + k }, () => ({ i: i + k, text: "x".repeat(300) }))));
      }
      await first.lock.release();
      const { rows } = await admin.query("SELECT count(*)::int AS n FROM pg_stat_user_tables WHERE relname IN ('phasekit_steps', 'phasekit_artifacts') AND (last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL)");
      expect(rows[0].n).toBe(0);

      const from = rec.sent.length; // past the fill's own reads (each new step, before its index was in)
      const again = await store.lock("run", { owner: { tool: "plans" } });
      if (!again.ok) throw again.error;
      rec.holdIndexLoads();
      const cps = await again.lock.store.checkpoints("run", { now: () => new Date() });
      expect(await cps.record("s1500")).toMatchObject({ status: "completed" });
      rec.release();
      expect(await cps.records()).toHaveLength(STEPS);
      expect(await cps.step("s700", { i: 700 }, () => "ran again")).toMatchObject({ reused: true, output: { i: 700 } });
      await again.lock.release();

      // The named point reads it sent.
      const reads = rec.sent.slice(from).flatMap((s) => (s.name?.startsWith("phasekit_read_") ? [{ ...s, name: s.name }] : []));
      expect(reads.map((s) => s.name)).toEqual(["phasekit_read_step_chained", "phasekit_read_outputs_chained"]);
      const measured: Array<{ statement: string; mode: string; blocks: number; bound: number }> = [];
      for (const s of reads) {
        const bound = PER_ROW_BLOCKS * (await rowsRead(s)) + FIXED_BLOCKS;
        for (const mode of ["force_custom_plan", "force_generic_plan"] as const) measured.push({ statement: s.name, mode, blocks: await blocks(s, mode), bound });
      }
      expect(measured.filter((m) => m.blocks > m.bound)).toEqual([]);
    }, 60_000);
  });
}
