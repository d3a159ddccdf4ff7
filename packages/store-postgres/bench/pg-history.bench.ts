/**
 * Issue 17's byte goal on PostgreSQL: what a run leaves in the database after close when each of its 1,000
 * `ctx.step` outputs is a 10 KB value with ~200 B changed (the same values as the fs row of
 * bench/suites/history-goals.bench.ts), measured as the bytes of the run's rows as written (what the fs row
 * counts of its folder) against the 1 MiB budget, with the rows as stored and the tables on disk beside it.
 * `BENCH_SMOKE=1` (and CI) shrink the count so the suite only proves it runs.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { createReporter, runWorkflow } from "@phasekit/adapters-pi";
import { goalRow, type BenchRow, type BenchSuite } from "../../../bench/harness.js";
import { openPostgresPlanStore } from "../src/index.js";
import { startCluster } from "../test/helpers/cluster.js";

const STEPS = process.env.CI || process.env.BENCH_SMOKE ? 50 : 1_000;
const MiB = 1024 * 1024;
const TABLES = ["phasekit_runs", "phasekit_journal", "phasekit_steps", "phasekit_commits", "phasekit_artifacts", "phasekit_control", "phasekit_run_writes"];

/** A 10 KB state whose next version has ~200 B changed: the generator of history-goals.bench.ts. */
function changing(): (i: number) => Record<string, string> {
  const state: Record<string, string> = {};
  for (let i = 0; i < Math.round(10_000 / 110); i++) state[`k${String(i).padStart(4, "0")}`] = `0-${i}-`.padEnd(100, "x");
  const keys = Object.keys(state);
  return (i) => {
    for (const k of [keys[(i * 2) % keys.length], keys[(i * 2 + 1) % keys.length]]) state[k as string] = `${i}-changed-`.padEnd(100, "c");
    return { ...state };
  };
}

/**
 * The run's bytes three ways: its rows as written (the `octet_length` of each column's text: what the fs row counts), as the rows
 * hold it (`pg_column_size`: TOAST-compressed where PostgreSQL compressed it) and the tables on disk
 * (`pg_total_relation_size`, heap + TOAST + indexes; the cluster holds this run only).
 */
async function runBytes(url: string, namespace: string, slug: string): Promise<{ written: number; stored: number; disk: number; artifactsWritten: number }> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const out = { written: 0, stored: 0, disk: 0, artifactsWritten: 0 };
    await c.query("CHECKPOINT");
    for (const t of TABLES) {
      const r = await c.query<{ w: string | null; s: string | null; d: string }>(
        `SELECT (SELECT sum(octet_length(c.value))::bigint FROM ${t} t, jsonb_each_text(to_jsonb(t)) c WHERE t.namespace = $1 AND t.slug = $2) AS w,
                (SELECT sum(pg_column_size(t.*))::bigint FROM ${t} t WHERE t.namespace = $1 AND t.slug = $2) AS s,
                pg_total_relation_size('${t}')::bigint AS d`,
        [namespace, slug],
      );
      const row = r.rows[0];
      out.written += Number(row?.w ?? 0);
      out.stored += Number(row?.s ?? 0);
      out.disk += Number(row?.d ?? 0);
      if (t === "phasekit_artifacts") out.artifactsWritten = Number(row?.w ?? 0);
    }
    return out;
  } finally {
    await c.end();
  }
}

export const suite: BenchSuite = {
  title: "PostgreSQL store: bytes after close",
  description: `Throwaway cluster on 127.0.0.1. One runWorkflow run of ${STEPS.toLocaleString("en")} \`ctx.step\` outputs, each a 10 KB value with ~200 B changed from the one before (the values of the fs row in "One history per run"), through the PostgreSQL store; after close, the run's rows as written (the \`octet_length\` of each column's text in every phasekit table: what the fs row counts of its folder) against the 1 MiB budget; beside it the rows as stored (\`pg_column_size\`, TOAST-compressed: these values are padded with repeated characters, so pglz shrinks a whole 10 KB output to under 1 KB; real outputs compress less), the phasekit tables on disk after a CHECKPOINT (\`pg_total_relation_size\`: heap, TOAST, indexes and dead row versions; the cluster holds this run only), and the artifacts' share.`,
  notes: [
    "- *Outputs stored as deltas.* Before (every output whole in \`phasekit_artifacts\`, f720e33): 10.46 MiB as written (counted then as each row's text, which doubles quotes; the artifacts alone 10.07 MiB), 1.11 MiB as stored, 1.55 MiB on disk. With a whole value first and after every 32 deltas (the fs store's interval; schema 5: an artifact row with a \`base\` holds the delta ops on the output it names, the fs store's codec and rule, a delta only when under half the value), measured right before the row above on the same machine: 1.04 MiB as written (missed by 4%), 875.7 KiB as stored, 1.29 MiB on disk. Now a whole value first and after every 64 deltas: 918.5 KiB as written (met), 871.4 KiB as stored, 1.31 MiB on disk (schema 7's write count adds its table's pages). Of what is written, the artifacts are 531.0 KiB (16 whole values, ~156 KiB; 984 deltas, ~390 B each with their own and their base's fingerprint) and the step records ~387 KiB (~400 B each: input and output fingerprints, times). The interval is twice the fs store's because here a chain costs no round trip: the statement that reads an output reads every base of its chain with it (a recursive query), so a hit out of order takes at most 64 delta rows (~25 KB) more in that one statement and applies them; the readers' bound (\`MAX_CHAIN_LINKS\`, 128) stays twice the longest chain a holder writes. On disk the steps table also holds each step's replaced \`started\` row version until a vacuum, and the primary-key indexes (~220 KiB) and the other tables' empty pages count.",
  ],
  async run(): Promise<BenchRow[]> {
    const started = startCluster();
    if (!started.ok) throw new Error(`bench needs PostgreSQL: ${started.reason}`);
    const { cluster } = started;
    const store = await openPostgresPlanStore({ connectionString: cluster.url, namespace: "bytes" });
    try {
      const next = changing();
      await runWorkflow({ repoRoot: mkdtempSync(path.join(tmpdir(), "pk-bench-bytes-")), toolName: "bench", target: "out", store, createReporter: () => createReporter({ onChange: () => undefined }) }, async (ctx) => {
        for (let i = 0; i < STEPS; i++) await ctx.step(`s${i}`, { i }, () => next(i));
      });
      await store.close();
      const bytes = await runBytes(cluster.url, "bytes", "out");
      const label = `bytes after close: ${STEPS.toLocaleString("en")} ctx.step outputs of 10 KB, 200 B changed each (PostgreSQL)`;
      return [
        goalRow(`${label}, the rows as written`, "budget 1 MiB", bytes.written, MiB, "≤ 1.0×", 1, "bytes"),
        { subject: `${label}, the rows as stored (TOAST-compressed)`, baseline: "budget 1 MiB", subjectNs: bytes.stored, baselineNs: MiB, goal: "report", unit: "bytes" },
        { subject: `${label}, the tables on disk`, baseline: "budget 1 MiB", subjectNs: bytes.disk, baselineNs: MiB, goal: "report", unit: "bytes" },
        { subject: `${label}: the artifacts' rows as written`, baseline: "all of the run's rows as written", subjectNs: bytes.artifactsWritten, baselineNs: bytes.written, goal: "report", unit: "bytes" },
      ];
    } finally {
      await store.close().catch(() => undefined);
      cluster.destroy();
    }
  },
};
