/**
 * Side-by-side timing: contenders run in rounds, each round in a rotated order, each taking a batch of calls;
 * the figure per contender is the median over rounds of its per-call time. A disk or CPU hiccup then hits one
 * round of every contender instead of all of one contender's samples.
 */

/** Median per-call nanoseconds of each contender. */
export async function interleaved(
  contenders: Record<string, () => unknown | Promise<unknown>>,
  opts: { rounds: number; batch: number; warmup?: number },
): Promise<Record<string, number>> {
  return (await interleavedRounds(contenders, opts)).ns;
}

/**
 * The same, also giving per pair the median of the per-round ratios: a swing that lasts a round (the disk's
 * flush time moves with its other work) hits both sides of each ratio, where a ratio of the two medians can
 * take one side's quiet rounds against the other's busy ones.
 */
export async function interleavedRounds(
  contenders: Record<string, () => unknown | Promise<unknown>>,
  opts: { rounds: number; batch: number; warmup?: number },
): Promise<{ ns: Record<string, number>; ratio: (a: string, b: string) => number }> {
  const names = Object.keys(contenders);
  for (const name of names) for (let i = 0; i < (opts.warmup ?? Math.min(opts.batch, 20)); i++) await contenders[name]?.();
  const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < opts.rounds; r++) {
    for (let j = 0; j < names.length; j++) {
      const name = names[(r + j) % names.length] as string;
      const fn = contenders[name] as () => unknown;
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < opts.batch; i++) await fn();
      samples[name]?.push(Number(process.hrtime.bigint() - t0) / opts.batch);
    }
  }
  const ns = Object.fromEntries(names.map((n) => [n, median(samples[n] ?? [])]));
  return { ns, ratio: (a, b) => medianRatio(samples[a] ?? [], samples[b] ?? []) };
}

/** The median of the ratios `a[i] / b[i]` of two contenders' per-round samples. */
export function medianRatio(a: readonly number[], b: readonly number[]): number {
  return median(a.map((x, i) => x / (b[i] ?? NaN)));
}

/** Median of a list of numbers (NaN when empty). */
export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** True under `BENCH_SMOKE=1` or CI: every suite shrinks to a run of seconds that only proves it works. */
export const SMOKE = process.env.BENCH_SMOKE === "1" || process.env.CI === "true";
