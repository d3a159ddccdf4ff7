/**
 * Staleness judged on the contender's own clock. The holder refreshes the lock directory's mtime every
 * `updateMs`; comparing that mtime with our wall clock breaks when the clocks disagree (a holder 30 s behind
 * looked stale at once). Instead the contender remembers each heartbeat it sees (holder file name + mtime) and
 * when it first saw it, on `performance.now()` (monotonic): a lock is stale only once the same heartbeat has been
 * seen unchanged for the stale time. The memory is per process, so repeated attempts accumulate evidence.
 */
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";

const seen = new Map<string, { heartbeat: string; sinceMs: number }>();

/** How long (ms, monotonic) this process has seen `lockDir` carry this exact heartbeat; 0 when it just changed. */
export function observedAgeMs(lockDir: string, holderNames: string, mtimeMs: number): number {
  const heartbeat = `${holderNames}@${mtimeMs}`;
  const now = performance.now();
  const last = seen.get(lockDir);
  if (last === undefined || last.heartbeat !== heartbeat) {
    seen.set(lockDir, { heartbeat, sinceMs: now });
    // Bound the memory: only locks this process is contending for matter, and they are few.
    if (seen.size > 1_000) seen.delete(seen.keys().next().value as string);
    return 0;
  }
  return now - last.sinceMs;
}

/**
 * When the holder sent a refresh, on two clocks: the monotonic one (a wall-clock step back never makes a lapsed
 * heartbeat look fresh) and the wall clock (it goes on while the machine is suspended, when the monotonic one
 * stands still and a contender on another host does not).
 */
export interface RefreshStamp {
  mono: number;
  wall: number;
}

/** Now, as a refresh stamp. */
export const refreshClock = (): RefreshStamp => ({ mono: performance.now(), wall: Date.now() });

/** Milliseconds since `sent`, by whichever clock says longer (`now`: a test's clock, e.g. the memory store's). */
export function sinceRefresh(sent: RefreshStamp, now: RefreshStamp = refreshClock()): number {
  return Math.max(now.mono - sent.mono, now.wall - sent.wall);
}

/**
 * The holder's side of the rule: is its heartbeat, last sent at `sent`, past `staleMs` (by either clock)? While it
 * is not, no contender can have judged the lock dead: a contender watches a heartbeat unchanged for the stale time
 * from the moment it saw it, which is after the refresh was sent. So a heartbeat that is not overdue proves the
 * lock is still this holder's without any I/O.
 */
export function refreshOverdue(sent: RefreshStamp, staleMs: number, now?: RefreshStamp): boolean {
  return sinceRefresh(sent, now) > staleMs;
}

/**
 * The holder's side, when its heartbeat is overdue: waits up to another `staleMs` for the overdue refresh to land
 * (`lastRefreshMs()` changes), or for `settled()`. Null when fresh, refreshed or settled; else the ms since the
 * last refresh was sent.
 */
export async function awaitOverdueRefresh(lastRefreshMs: () => RefreshStamp, staleMs: number, settled: () => boolean): Promise<number | null> {
  const last = lastRefreshMs();
  for (const start = performance.now(); refreshOverdue(last, staleMs) && lastRefreshMs() === last && !settled(); await sleep(20)) {
    if (performance.now() - start > staleMs) return Math.round(sinceRefresh(last));
  }
  return null;
}
