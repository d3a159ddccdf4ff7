/**
 * Resume and reuse on PostgreSQL, for pg-step.bench.ts: a run of 10,000 steps against one of 10, what a reused
 * step costs once the run's step index is loaded, and a whole runWorkflow re-entry of reused steps (time, and
 * statements counted on the pool).
 */
import { performance } from "node:perf_hooks";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { createReporter, runWorkflow, type CheckpointStore, type RunContext } from "@phasekit/adapters-pi";
import type { BenchRow } from "../../../bench/harness.js";
import { median } from "../../../bench/suites/interleave.js";
import { openPostgresPlanStore, type PostgresPlanStore } from "../src/index.js";

const never = (): never => {
  throw new Error("a reused step ran");
};

/** What runWorkflow does per step: the attempt cap's record(), then step(). */
async function reuse(cps: CheckpointStore, i: number): Promise<void> {
  await cps.record(`s${i}`);
  const r = await cps.step(`s${i}`, { i }, never);
  if (!r.reused) throw new Error(`s${i} was not reused`);
}

/** Rows: resume of `bigSteps` vs `smallSteps` steps (interleaved over `rounds`), the index load, and a hit. */
export async function resumeRows(url: string, opts: { bigSteps: number; rounds: number; hits: number }): Promise<BenchRow[]> {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  let statements = 0;
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as { query: unknown }).query = (...args: unknown[]) => (statements++, query(...args));
  const store: PostgresPlanStore = await openPostgresPlanStore({ pool, namespace: "resume" });
  try {
    const big = `run-${opts.bigSteps}`;
    await fill(store, big, opts.bigSteps);
    await fill(store, "run-10", 10);
    /** Resume: take the lease (a new epoch), open the checkpoints, reuse the first step, release. */
    const resume = async (slug: string): Promise<{ resumeNs: number; indexNs: number }> => {
      const t0 = performance.now();
      const l = await store.lock(slug, { owner: { tool: "bench" } });
      if (!l.ok) throw l.error;
      const cps = await l.lock.store.checkpoints(slug, { now: () => new Date() });
      await reuse(cps, 0);
      await l.lock.release();
      const t1 = performance.now();
      // Outside the timing: the index load still under way finishes before the next contender starts.
      await cps.records();
      return { resumeNs: (t1 - t0) * 1e6, indexNs: (performance.now() - t0) * 1e6 };
    };
    const samples = { big: [] as number[], small: [] as number[], bigIndex: [] as number[], smallIndex: [] as number[], ratio: [] as number[] };
    for (let r = 0; r < opts.rounds + 1; r++) {
      const order = r % 2 === 0 ? ([big, "run-10"] as const) : (["run-10", big] as const);
      const got: Record<string, { resumeNs: number; indexNs: number }> = {};
      for (const slug of order) got[slug] = await resume(slug);
      if (r === 0) continue; // warm-up
      samples.big.push(got[big]!.resumeNs);
      samples.small.push(got["run-10"]!.resumeNs);
      samples.bigIndex.push(got[big]!.indexNs);
      samples.smallIndex.push(got["run-10"]!.indexNs);
      samples.ratio.push(got[big]!.resumeNs / got["run-10"]!.resumeNs);
    }

    // A hit once the index is loaded: time per hit and statements per hit.
    const l = await store.lock(big, { owner: { tool: "bench" } });
    if (!l.ok) throw l.error;
    const cps = await l.lock.store.checkpoints(big, { now: () => new Date() });
    await cps.records();
    const perHit: number[] = [];
    const before = statements;
    for (let r = 0; r < opts.rounds; r++) {
      const t0 = performance.now();
      for (let i = 0; i < opts.hits; i++) await reuse(cps, r * opts.hits + i);
      perHit.push(((performance.now() - t0) / opts.hits) * 1e6);
    }
    const statementsPerHit = (statements - before) / (opts.rounds * opts.hits);
    const bare = new pg.Pool({ connectionString: url, max: 1 });
    const bareNs: number[] = [];
    try {
      for (let r = 0; r < opts.rounds; r++) {
        const t0 = performance.now();
        for (let i = 0; i < opts.hits; i++) await bare.query("SELECT body FROM phasekit_artifacts WHERE namespace = $1 AND slug = $2 LIMIT 1", ["resume", big]);
        bareNs.push(((performance.now() - t0) / opts.hits) * 1e6);
      }
    } finally {
      await bare.end();
    }
    await l.lock.release();
    const wf = await workflowReplay(store, () => statements, opts.hits * 10);
    const n = opts.bigSteps.toLocaleString("en");
    return [
      { subject: `pg resume (lease + open + first reuse + release) of ${n} steps`, baseline: "the same for 10 steps", subjectNs: median(samples.big), baselineNs: median(samples.small), ratio: median(samples.ratio), goal: "≤ 2×", met: median(samples.ratio) <= 2 },
      { subject: `pg resume (lease + open + first reuse + release) of ${n} steps`, baseline: "budget 20 ms", subjectNs: median(samples.big), baselineNs: 20e6, goal: "≤ 1.0×", met: median(samples.big) <= 20e6 },
      { subject: `pg step index loaded in the background, ${n} steps (from the lease on)`, baseline: "the same for 10 steps", subjectNs: median(samples.bigIndex), baselineNs: median(samples.smallIndex), goal: "report" },
      {
        subject: `pg reuse hit (record + step, 1 KB output), index loaded: ${statementsPerHit.toFixed(2)} statements per hit`,
        baseline: "one bare SELECT of an artifact row",
        subjectNs: median(perHit),
        baselineNs: median(bareNs),
        goal: "≤ 1 round trip",
        met: statementsPerHit <= 1,
      },
      {
        subject: `runWorkflow re-entry of ${wf.steps} reused steps: ${wf.perStep.toFixed(2)} statements per step`,
        baseline: "one bare SELECT of an artifact row",
        subjectNs: wf.nsPerStep,
        baselineNs: median(bareNs),
        goal: "report (the control check before each step is one statement)",
      },
    ];
  } finally {
    await store.close();
    await pool.end();
  }
}

/** A completed runWorkflow run of `steps` steps, re-entered: time and statements per reused step. */
async function workflowReplay(store: PostgresPlanStore, statements: () => number, steps: number): Promise<{ steps: number; perStep: number; nsPerStep: number }> {
  const repoRoot = mkdtempSync(path.join(tmpdir(), "phasekit-bench-pg-wf-"));
  const body = async (ctx: RunContext): Promise<string> => {
    for (let i = 0; i < steps; i++) await ctx.step(`s${i}`, { i }, async () => ({ i, text: "x".repeat(1_000) }));
    return "done";
  };
  const quiet = () => createReporter({ headless: true, stream: { write: () => true } });
  const run = (reenter: boolean) => runWorkflow({ repoRoot, target: "wf", toolName: "bench", store, reenter, createReporter: quiet }, body);
  await run(false);
  const before = statements();
  const t0 = performance.now();
  const r = await run(true);
  const ns = (performance.now() - t0) * 1e6;
  if (r.status !== "completed") throw new Error(`re-entry ended ${r.status}`);
  return { steps, perStep: (statements() - before) / steps, nsPerStep: ns / steps };
}

/** A run of `steps` completed steps `s0…` with 1 KB outputs (parallel batches share WAL flushes). */
async function fill(store: PostgresPlanStore, slug: string, steps: number): Promise<void> {
  const l = await store.lock(slug, { owner: { tool: "bench" } });
  if (!l.ok) throw l.error;
  const cps = await l.lock.store.checkpoints(slug, { now: () => new Date() });
  for (let i = 0; i < steps; i += 100) {
    await Promise.all(Array.from({ length: Math.min(100, steps - i) }, (_, k) => cps.step(`s${i + k}`, { i: i + k }, () => ({ i: i + k, text: "x".repeat(1_000) }))));
  }
  await l.lock.release();
}
