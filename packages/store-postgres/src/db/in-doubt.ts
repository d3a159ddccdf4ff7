/**
 * How long the store waits on a database it can no longer count on before it lets go: the release of a lease in
 * doubt (lease.ts) and a store's close (plan-store.ts). What is let go then is ended by a lease running out on its
 * own, so a longer wait buys nothing but a caller that returns late: a partition or an operator's row lock ends a
 * run, its release and its close within the lease plus 2 s (docs/postgres.md, "Timeouts").
 */

/** The wait, from the lease `leaseMs`: a quarter of it, at most 0.5 s. */
export function inDoubtMs(leaseMs: number): number {
  return Math.min(leaseMs / 4, 500);
}

/** Whether `p` settled within `ms` (Infinity: waits for it); never rejects: what `p` gave is its caller's to read. */
export async function settledWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  const settled = p.then(
    () => true,
    () => true,
  );
  // setTimeout takes Infinity (or anything past 2^31 - 1 ms) as 1 ms.
  if (ms === Infinity) return settled;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, ms))));
  return Promise.race([settled, late]).finally(() => clearTimeout(timer));
}

/** `p`, or an error read as a reply timeout (`details.timedOut: "reply"`) once `ms` have passed. */
export function bounded<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Query read timeout (${what} given up)`)), ms);
  });
  p.catch(() => undefined);
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
