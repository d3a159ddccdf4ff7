/**
 * The memory store's lease, held to the rule of the fs lock and the PostgreSQL lease: it is live while its last
 * renewal is not overdue by the one freshness rule (lock/heartbeat.ts `refreshOverdue`, over both clocks), a
 * heartbeat renews it while it holds the run, and once it ran out the next `lock()` may take the run. Its
 * holder's next check is the overdue renewal those stores await: it lands while nobody took the run (the lease
 * is live again: contenders are LOCKED, a pause is accepted), and LOCK_LOST is said only when another lock did.
 * The clock is the store's, so a test moves time (a suspend, a stall) without waiting for it.
 */
import { refreshOverdue, type RefreshStamp } from "../lock/heartbeat.js";

/** The memory store's clock: a refresh stamp on both clocks (default the system's; a test passes its own). */
export type MemoryClock = () => RefreshStamp;

/** One acquisition of a run's lock. */
export interface MemoryLease {
  readonly tool: string;
  readonly epoch: number;
  /** How long a renewal keeps it live: the lock's `staleMs`, as on the other stores. */
  readonly leaseMs: number;
  readonly controller: AbortController;
  /** When its last renewal landed. */
  refreshed: RefreshStamp;
  /** Its heartbeat stands still (a stalled holder): nothing renews it until its holder acts again. */
  stalled: boolean;
  released: boolean;
  heartbeat: ReturnType<typeof setInterval> | undefined;
}

/** A lease renewed by its heartbeat while `holds()` says it still holds the run; the heartbeat ends with it. */
export function newMemoryLease(tool: string, epoch: number, leaseMs: number, clock: MemoryClock, holds: () => boolean): MemoryLease {
  const lease: MemoryLease = { tool, epoch, leaseMs, controller: new AbortController(), refreshed: clock(), stalled: false, released: false, heartbeat: undefined };
  // As the other stores' heartbeats: a few renewals per lease, so a live holder never runs out while it waits.
  lease.heartbeat = setInterval(() => {
    if (!holds()) return endMemoryLease(lease);
    if (!lease.stalled) lease.refreshed = clock();
  }, Math.max(50, Math.floor(leaseMs / 3)));
  lease.heartbeat.unref?.();
  return lease;
}

/** Live: not released, and its last renewal not overdue by the rule every store applies. */
export function leaseLive(lease: MemoryLease, clock: MemoryClock): boolean {
  return !lease.released && !refreshOverdue(lease.refreshed, lease.leaseMs, clock());
}

/** The holder acts (a check, a write): a lease that ran out while nobody took the run is renewed, as elsewhere. */
export function renewMemoryLease(lease: MemoryLease, clock: MemoryClock): void {
  lease.stalled = false;
  lease.refreshed = clock();
}

/** The lease runs out as a stalled holder's does: its heartbeat stands still and its last renewal is long past. */
export function stallMemoryLease(lease: MemoryLease): void {
  lease.stalled = true;
  lease.refreshed = { mono: Number.NEGATIVE_INFINITY, wall: Number.NEGATIVE_INFINITY };
}

/** Stops the heartbeat (released, taken, or the store closed). */
export function endMemoryLease(lease: MemoryLease): void {
  if (lease.heartbeat !== undefined) clearInterval(lease.heartbeat);
  lease.heartbeat = undefined;
}

