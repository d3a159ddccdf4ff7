/** Shared shape of bench suites: each compares a subject with a baseline measured in the same run. */
import { Bench } from "tinybench";
import { median, medianRatio } from "./suites/interleave.js";

export interface BenchRow {
  subject: string;
  baseline: string;
  subjectNs: number;
  baselineNs: number;
  goal?: string;
  /** The ratio to report when measured per round (median of per-round ratios); else subjectNs / baselineNs. */
  ratio?: number;
  /** What the two figures measure (default "ns": time per operation). */
  unit?: "ns" | "bytes" | "count";
  /** Whether the goal is met, when the suite can judge it. */
  met?: boolean;
}

export interface BenchSuite {
  title: string;
  description: string;
  /** Paragraphs printed under the table (why a goal is out of reach, measured). */
  notes?: string[];
  run(): Promise<BenchRow[]>;
}

/** Median nanoseconds per call of each task, measured interleaved in one tinybench run. */
export async function medians(
  tasks: Record<string, () => unknown | Promise<unknown>>,
  opts: { time?: number; warmupTime?: number; iterations?: number } = {},
): Promise<Record<string, number>> {
  const bench = new Bench({ time: opts.time ?? 500, warmupTime: opts.warmupTime ?? 100, iterations: opts.iterations ?? 10 });
  for (const [name, fn] of Object.entries(tasks)) bench.add(name, fn);
  await bench.run();
  const out: Record<string, number> = {};
  for (const task of bench.tasks) {
    const r = task.result as unknown as { latency?: { p50?: number } } | undefined;
    const p50 = r?.latency?.p50;
    if (p50 === undefined) throw new Error(`bench task ${task.name} produced no latency`);
    out[task.name] = p50 * 1e6; // ms → ns
  }
  return out;
}

/**
 * Median nanoseconds per call of each task, measured **interleaved**: every round runs each task once for a
 * batch of `batch` calls, in a rotating order, so drift and noise (other processes, GC, CPU frequency) hit all
 * contenders alike. Returns per-task medians over rounds and, per pair, the median of the per-round ratios.
 */
export function interleavedSync(
  tasks: Record<string, () => unknown>,
  opts: { rounds?: number; batch?: number; warmupRounds?: number } = {},
): { ns: Record<string, number>; ratio: (a: string, b: string) => number } {
  const names = Object.keys(tasks);
  const rounds = opts.rounds ?? 200;
  const batch = opts.batch ?? 200;
  const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  const total = (opts.warmupRounds ?? 20) + rounds;
  for (let round = 0; round < total; round++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(round + k) % names.length] as string;
      const fn = tasks[name] as () => unknown;
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < batch; i++) fn();
      const ns = Number(process.hrtime.bigint() - t0) / batch;
      if (round >= total - rounds) (samples[name] as number[]).push(ns);
    }
  }
  const ns = Object.fromEntries(names.map((n) => [n, median(samples[n] as number[])]));
  return { ns, ratio: (a, b) => medianRatio(samples[a] as number[], samples[b] as number[]) };
}

/** A goal row: `subject` against `baseline`, met when their ratio is at most `limit`. */
export function goalRow(subject: string, baseline: string, s: number, b: number, goal: string, limit: number, unit?: BenchRow["unit"]): BenchRow {
  return { subject, baseline, subjectNs: s, baselineNs: b, goal, met: s / b <= limit, ...(unit === undefined ? {} : { unit }) };
}
