/** Shared shape of bench suites: each compares a subject with a baseline measured in the same run. */
import { Bench } from "tinybench";

export interface BenchRow {
  subject: string;
  baseline: string;
  subjectNs: number;
  baselineNs: number;
  goal?: string;
  /** What the two figures measure (default "ns": time per operation). */
  unit?: "ns" | "bytes";
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
