/**
 * Issue 20's lease goals, measured against a throwaway PostgreSQL: 500 runs at once on one store (its
 * 10-connection pool shared by all) with a 1 s lease, counting LOCK_LOST (nobody else contends, so any is false);
 * and how soon a run returns when an operator holds its row lock, or the network is partitioned (a paused TCP
 * proxy), against the goal of the lease + 2 s.
 */
import { performance } from "node:perf_hooks";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { createReporter, runWorkflow } from "@phasekit/adapters-pi";
import type { BenchRow, BenchSuite } from "../../../bench/harness.js";
import { openPostgresPlanStore } from "../src/index.js";
import { startCluster } from "../test/helpers/cluster.js";
import { startTcpProxy } from "../test/helpers/tcp-proxy.js";

const RUNS = process.env.CI ? 100 : 500;
const STEPS = 3;
const LEASE_MS = 1_000;
const OUTPUT = { text: "x".repeat(10_000) };

export const suite: BenchSuite = {
  title: "PostgreSQL store: the lease under load and faults",
  description: `Throwaway cluster on 127.0.0.1. Load: ${RUNS} runs at once through one store (one 10-connection pool, the heartbeat on its own connection), each taking a ${LEASE_MS} ms lease, ${STEPS} step misses with 10 KB outputs, then the release; nobody else contends, so every LOCK_LOST is false. Faults (${LEASE_MS} ms lease, runWorkflow): an operator holds the run's row (\`SELECT … FOR UPDATE\` in an open transaction) between two steps, or the link is cut (the TCP proxy in front of the server paused) inside a step; the time from the fault to runWorkflow's return, against the lease + 2 s.`,
  async run() {
    const started = startCluster();
    if (!started.ok) throw new Error(`bench needs PostgreSQL: ${started.reason}`);
    const { cluster } = started;
    try {
      return [await loadRow(cluster.url), await rowLockRow(cluster.url), await partitionRow(cluster.port)];
    } finally {
      cluster.destroy();
    }
  },
};

async function loadRow(url: string): Promise<BenchRow> {
  const store = await openPostgresPlanStore({ connectionString: url, namespace: "load", leaseMs: LEASE_MS });
  const codes = new Map<string, number>();
  const t0 = performance.now();
  try {
    await Promise.all(
      Array.from({ length: RUNS }, async (_, i) => {
        try {
          const l = await store.lock(`run-${i}`, { owner: { tool: "bench" } });
          if (!l.ok) throw l.error;
          try {
            const cps = await l.lock.store.checkpoints(`run-${i}`, { now: () => new Date() });
            for (let s = 0; s < STEPS; s++) await cps.step(`s${s}`, { i, s }, () => OUTPUT);
          } finally {
            await l.lock.release();
          }
          codes.set("ok", (codes.get("ok") ?? 0) + 1);
        } catch (error) {
          const code = String((error as { code?: unknown }).code ?? "INTERNAL");
          codes.set(code, (codes.get(code) ?? 0) + 1);
        }
      }),
    );
  } finally {
    await store.close();
  }
  const seconds = (performance.now() - t0) / 1000;
  const lost = codes.get("LOCK_LOST") ?? 0;
  const other = RUNS - (codes.get("ok") ?? 0) - lost;
  return {
    subject: `${RUNS} concurrent runs, ${LEASE_MS / 1000} s lease, one shared pool: LOCK_LOST (all false: nobody contends); ${codes.get("ok") ?? 0} completed, ${other} other failures, ${seconds.toFixed(1)} s in all`,
    baseline: `${RUNS} runs`,
    subjectNs: lost,
    baselineNs: RUNS,
    unit: "count",
    goal: "0 false LOCK_LOST",
    met: lost === 0 && other === 0,
  };
}

async function rowLockRow(url: string): Promise<BenchRow> {
  const store = await openPostgresPlanStore({ connectionString: url, namespace: "rowlock", leaseMs: LEASE_MS });
  const operator = new pg.Client({ connectionString: url });
  await operator.connect();
  let lockedAt = 0;
  try {
    await runWorkflow({ repoRoot: mkdtempSync(path.join(tmpdir(), "pk-bench-lock-")), toolName: "bench", target: "locked", store, lock: { staleMs: LEASE_MS }, onHookFailure: () => undefined, createReporter: () => createReporter({ onChange: () => undefined }) }, async (ctx) => {
      await ctx.step("s0", {}, () => 0);
      await operator.query("BEGIN");
      await operator.query("SELECT 1 FROM phasekit_runs WHERE namespace = 'rowlock' AND slug = 'locked' FOR UPDATE");
      lockedAt = performance.now();
      await ctx.step("s1", {}, () => 1);
      return "done";
    }).catch(() => undefined);
    const took = performance.now() - lockedAt;
    return { subject: "an operator's row lock on the run (1 s lease): runWorkflow returns after", baseline: "the lease + 2 s", subjectNs: took * 1e6, baselineNs: (LEASE_MS + 2_000) * 1e6, goal: "≤ 1×", met: took <= LEASE_MS + 2_000 };
  } finally {
    await operator.query("ROLLBACK").catch(() => undefined);
    await operator.end();
    await store.close();
  }
}

async function partitionRow(port: number): Promise<BenchRow> {
  const proxy = await startTcpProxy(port);
  const store = await openPostgresPlanStore({ connectionString: `postgres://phasekit@127.0.0.1:${proxy.port}/phasekit`, namespace: "partition", leaseMs: LEASE_MS });
  let cutAt = 0;
  try {
    await runWorkflow({ repoRoot: mkdtempSync(path.join(tmpdir(), "pk-bench-cut-")), toolName: "bench", target: "cut", store, lock: { staleMs: LEASE_MS }, onHookFailure: () => undefined, createReporter: () => createReporter({ onChange: () => undefined }) }, async (ctx) => {
      await ctx.step("s0", {}, () => 0);
      await ctx.step("s1", {}, () => {
        proxy.pause();
        cutAt = performance.now();
        return 1;
      });
      await ctx.step("s2", {}, () => 2);
      return "done";
    }).catch(() => undefined);
    const took = performance.now() - cutAt;
    return { subject: "a partition inside a step (paused TCP proxy, 1 s lease): runWorkflow returns after", baseline: "the lease + 2 s", subjectNs: took * 1e6, baselineNs: (LEASE_MS + 2_000) * 1e6, goal: "≤ 1×", met: took <= LEASE_MS + 2_000 };
  } finally {
    proxy.resume();
    await sleep(10);
    await store.close();
    await proxy.close();
  }
}
