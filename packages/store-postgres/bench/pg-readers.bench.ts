/**
 * What a reader's look costs on PostgreSQL: `phasekit list` (the store's one statement, listRunFacts, against
 * the two reads per run it replaced, one of them every step record) and the inspector's change check every
 * 250 ms on a 10,000-step run (runSignature against rebuilding the run view, what the check did before).
 * Contenders interleaved round by round, median of the per-round ratios.
 * `BENCH_SMOKE=1` (and CI) shrink the run so the suite only proves it runs.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { type BenchRow, type BenchSuite } from "../../../bench/harness.js";
import { interleavedRounds } from "../../../bench/suites/interleave.js";
import { runDetail } from "../../adapters-pi/src/cli/run-view.js";
import { closeStores, storeRunFacts } from "../../adapters-pi/src/cli/store-runs.js";
import { openPostgresPlanStore, type PostgresPlanStore } from "../src/index.js";
import { sampleMetadata } from "../../adapters-pi/test/helpers/metadata-fixtures.js";
import { startCluster } from "../test/helpers/cluster.js";

const SMOKE = Boolean(process.env.CI || process.env.BENCH_SMOKE);
const BIG = SMOKE ? 200 : 10_000;
const SMALL_RUNS = 9;
const ROUNDS = SMOKE ? 3 : 10;
const PER_ROUND = SMOKE ? 2 : 5;
const NS = "readers";

/** A run of `steps` completed step records: one written by the store, the rest copies of it made by the server. */
async function makeRun(store: PostgresPlanStore, admin: pg.Pool, slug: string, steps: number): Promise<void> {
  const locked = await store.lock(slug, { owner: { tool: "bench" } });
  if (!locked.ok) throw locked.error;
  const w = await locked.lock.store?.writeMetadata(slug, sampleMetadata(slug, 0), null);
  if (w?.ok !== true) throw new Error(`metadata of ${slug} not written`);
  const cps = await (locked.lock.store as PostgresPlanStore).checkpoints(slug, { now: () => new Date() });
  await cps.step("s0", { i: 0 }, () => ({ text: "x".repeat(100) }));
  await locked.lock.release();
  await admin.query(
    `INSERT INTO phasekit_steps (namespace, slug, step_id, record, epoch)
     SELECT namespace, slug, 's' || i, jsonb_set(record, '{stepId}', to_jsonb('s' || i)), epoch FROM phasekit_steps, generate_series(1, $3::int - 1) i
     WHERE namespace = $1 AND slug = $2 AND step_id = 's0'`,
    [NS, slug, steps],
  );
}

export const suite: BenchSuite = {
  title: "PostgreSQL store: what a reader's look costs",
  description: `Throwaway cluster on 127.0.0.1. One namespace: a run of ${BIG.toLocaleString("en")} completed steps and ${SMALL_RUNS} runs of 1. List: the store's one statement (\`listRunFacts\`: every run with its lease and step facts, the records left in the server) against the two reads per run \`phasekit list\` made before (the lease, then every step record for the step facts). Change check (the inspector's run page asks every 250 ms): \`runSignature\` of the ${BIG.toLocaleString("en")}-step run against rebuilding its run view (runDetail), what the check did before. Contenders interleaved round by round (${ROUNDS} rounds × ${PER_ROUND} ops), median of the per-round ratios.`,
  notes: [
    "- *Measured* with `npx tsx --conditions=@phasekit/source bench/run.ts pg-readers` on the shared 2-core machine (under load). Before the change the signature was a digest of every record (`md5` of the records as text): 25.41 ms against 38.37 ms (0.67×); the sum of the rows' `xmin` made it 0.06× (3.80 ms against 60.57 ms); the run's write count (schema 7: two rows read by primary key, no step row) 0.003× (412 µs against 126 ms, at load average 12).",
  ],
  async run(): Promise<BenchRow[]> {
    const started = startCluster();
    if (!started.ok) throw new Error(`bench needs PostgreSQL: ${started.reason}`);
    const { cluster } = started;
    const admin = new pg.Pool({ connectionString: cluster.url, max: 1 });
    const store = await openPostgresPlanStore({ connectionString: cluster.url, namespace: NS });
    const roots = { repoRoot: mkdtempSync(path.join(tmpdir(), "pk-bench-readers-")), store: { kind: "postgres" as const, connectionString: cluster.url, namespace: NS, label: `postgres:${NS}` } };
    try {
      await makeRun(store, admin, "big", BIG);
      for (let i = 0; i < SMALL_RUNS; i++) await makeRun(store, admin, `small-${i}`, 1);
      const signature = store.runSignature as (slug: string) => Promise<string>;
      const { ns, ratio } = await interleavedRounds(
        {
          list: () => storeRunFacts(store),
          listBefore: () => storeRunFacts({ ...store, listRunFacts: undefined }),
          sig: () => signature("big"),
          sigBefore: () => runDetail(roots, "big", 0),
        },
        { rounds: ROUNDS, batch: PER_ROUND, warmup: PER_ROUND },
      );
      const runs = SMALL_RUNS + 1;
      return [
        { subject: `list of ${runs} runs, one ${BIG.toLocaleString("en")} steps long (listRunFacts, 1 statement)`, baseline: `the same before (1 + 2 per run = ${1 + 2 * runs} statements)`, subjectNs: ns["list"] as number, baselineNs: ns["listBefore"] as number, ratio: ratio("list", "listBefore"), goal: "≤ 1.0×", met: ratio("list", "listBefore") <= 1 },
        { subject: `change check of a ${BIG.toLocaleString("en")}-step run (runSignature, 1 statement)`, baseline: "rebuilding its run view (runDetail)", subjectNs: ns["sig"] as number, baselineNs: ns["sigBefore"] as number, ratio: ratio("sig", "sigBefore"), goal: "≤ 1.0×", met: ratio("sig", "sigBefore") <= 1 },
      ];
    } finally {
      await closeStores();
      await store.close();
      await admin.end();
      cluster.destroy();
    }
  },
};
