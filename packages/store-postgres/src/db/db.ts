/** The shared handle of one store (its pool and namespace), and the fence a holder's writes carry. */
import type { Pool, PoolClient, QueryArrayConfig, QueryConfig, QueryResult, QueryResultRow } from "pg";
import { workflowError, type WorkflowError } from "@phasekit/core";
import { isConnectionError, isTerminatedConnection } from "./errors.js";
import { keptClientOf } from "./own-pool.js";

/** What every part of the store works with. */
export interface Db {
  readonly pool: Pool;
  /** Runs of different stores (plan roots) live side by side in one database under their namespace. */
  readonly namespace: string;
}

/** What a lease lends the writes fenced by it: its abort signal, and a renewal that confirms it is still held. */
export interface LeaseGuard {
  readonly signal: AbortSignal;
  /** Renews now: true when the lease is still this holder's (renewed); false when it is lost (signal aborted) or given up (stopped). */
  confirm(): Promise<boolean>;
  /**
   * Whether the lease is known live now without asking the database: a renewal that landed was sent less than a
   * lease ago by this process's monotonic clock (a pause or a starved event loop makes it false).
   */
  fresh(): boolean;
  /** Set once the lease ended by its holder's act (its store closed, or released): every write under it is refused with this. */
  readonly givenUp?: WorkflowError | undefined;
}

/**
 * Returns once the lease is known live now (at once when it is fresh; else after renewals that land), or throws
 * why not (LOCK_LOST when another holder took the run). A holder calls it right before it starts work nobody
 * else may do at the same time: its last fenced write proves the lease only for the moment that write landed,
 * and the process may have stood still past the lease since (SIGSTOP, a frozen VM) while the run was taken.
 */
export async function stillHolding(lease: LeaseGuard, refused: () => Promise<unknown>): Promise<void> {
  if (lease.givenUp !== undefined) throw lease.givenUp;
  // A renewal in flight from before the pause lands with its old send time: confirm again until one is fresh.
  // Renewals that land but each take longer than the lease never make it fresh: the work is not started then.
  for (let tries = 0; !lease.fresh(); tries++) {
    if (tries === 3) {
      throw workflowError("store-postgres", "WRITE_FAILED", "the lease could not be confirmed within its length: each renewal took longer than the lease; the step was not started.", {
        field: "lease",
        hint: "the database answers slower than the lease: give the store a longer leaseMs, or find what slows it (pg_stat_activity)",
      });
    }
    if (!(await lease.confirm())) throw lease.signal.aborted ? lease.signal.reason : (lease.givenUp ?? (await refused()));
  }
}

/**
 * Who a write is made for: one lease (its epoch and token, and the lease itself to confirm it), or `null` for a
 * writer holding no lease. It travels with the lease's store and checkpoints, never looked up in the store
 * object: two leases taken through one store fence their writes apart.
 */
export type Fence = { readonly epoch: number; readonly token: string; readonly lease?: LeaseGuard } | null;

/**
 * The fence every write statement carries, as a SQL condition on the run row `r` with the epoch in `$E` and the
 * token in `$T`: the holder's own epoch and token under a lease the database still counts as live, or (for a
 * writer holding no lease) no live holder at all. Statements lock the row (UPDATE, or SELECT … FOR SHARE) so a
 * takeover either waits for the write to commit or commits first and makes the re-checked condition false.
 */
export function fenceSql(e: string, t: string): string {
  return `((${t}::text IS NULL AND (r.holder IS NULL OR r.lease_until < now())) OR (r.epoch = ${e}::bigint AND r.holder = ${t}::text AND r.lease_until >= now()))`;
}

/** The `[$E, $T]` parameters of `fenceSql` for `fence`. */
export function fenceParams(fence: Fence): [number | null, string | null] {
  return fence === null ? [null, null] : [fence.epoch, fence.token];
}

/**
 * Runs one statement on the pool. A statement whose connection was terminated under it (`pg_terminate_backend`,
 * a pooled connection the server dropped) is sent again on a fresh connection when `idempotent` (reads, upserts
 * of the same row, fenced by epoch): its first try either committed or did not, and a second try lands the same
 * row either way. Other statements fail with the connection error, and so does one whose pool is ending: the
 * store's close cut it (own-pool.ts), and nothing is sent after a close, not even on the store's next pool.
 */
export async function query<R extends QueryResultRow = QueryResultRow>(
  db: Db,
  statement: string | QueryConfig | QueryArrayConfig,
  values?: unknown[],
  idempotent = true,
): Promise<QueryResult<R>> {
  const pool = db.pool;
  // The store's own pool keeps a connection between statements that follow closely (kept-client.ts).
  const kept = keptClientOf(pool);
  for (let attempt = 0; ; attempt++) {
    try {
      return await (kept === undefined ? pool.query<R>(statement as string, values) : kept.query<R>(statement, values));
    } catch (error) {
      if (!idempotent || attempt >= 2 || pool.ending || !isTerminatedConnection(error)) throw error;
    }
  }
}

/**
 * A holder's write under `fence`: `attempt` resolves undefined when the fence refused it. A lease whose signal
 * is aborted writes nothing (its reason is thrown), and a write in flight when it aborts is given up at once
 * with that reason (a partition: the lease could not be confirmed; the statement, fenced, lands only under a
 * live lease if it lands at all). A refused write is tried once more after a renewal confirms the lease is
 * still this holder's: the database refuses a write under a lease that has run out (nobody may have taken it
 * yet), and only a renewal that lands makes it live again (docs/postgres.md, "The lease").
 */
export async function fencedWrite<T>(fence: Fence, attempt: () => Promise<T | undefined>): Promise<T | undefined> {
  const lease = fence?.lease;
  if (lease === undefined) return attempt();
  // Refused before it is sent: the row may still count the lease live, but its holder ended it (closed, released: store-kit's rule).
  if (lease.givenUp !== undefined) throw lease.givenUp;
  const first = await untilLost(lease, attempt());
  if (first !== undefined) return first;
  if (!(await lease.confirm())) {
    if (lease.signal.aborted) throw lease.signal.reason;
    // Stopped while confirming (its store closed, or the lease released): that, not a newer holder, is why.
    if (lease.givenUp !== undefined) throw lease.givenUp;
    return undefined;
  }
  return untilLost(lease, attempt());
}

/** `p`, or the lease's abort reason as soon as its signal aborts (whichever comes first). */
export function untilLost<T>(lease: LeaseGuard, p: Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const lost = (): void => reject(lease.signal.reason);
    if (lease.signal.aborted) lost();
    const waiting = waitersOf(lease.signal);
    waiting.add(lost);
    p.then(
      (v) => (waiting.delete(lost), resolve(v)),
      (e: unknown) => (waiting.delete(lost), reject(e)),
    );
  });
}

// The writes in flight under each lease. One abort listener per lease signal tells them all: a listener per write
// passed Node's limit of 10 on the one signal as soon as more than 10 steps wrote at once (MaxListenersExceeded).
const waiters = new WeakMap<AbortSignal, Set<() => void>>();

function waitersOf(signal: AbortSignal): Set<() => void> {
  let waiting = waiters.get(signal);
  if (waiting === undefined) {
    const all = new Set<() => void>();
    signal.addEventListener("abort", () => all.forEach((lost) => lost()), { once: true });
    waiters.set(signal, (waiting = all));
  }
  return waiting;
}

/**
 * Keeps `client` (checked out of a pool for a transaction's statements) safe until the returned release is
 * called: a session the server ends between two statements (idle in transaction past its timeout while the
 * process stood still, a restart, pg_terminate_backend) is reported by the next statement, not as an "error"
 * event nobody listens to, which would end the process. The release destroys the connection when a statement
 * failed with a connection error (`failure`) or the session ended meanwhile.
 */
export function checkedOut(client: PoolClient): (failure?: unknown) => void {
  let ended: Error | undefined;
  const onError = (error: Error): void => void (ended ??= error);
  client.on("error", onError);
  return (failure) => {
    client.removeListener("error", onError);
    client.release(isConnectionError(failure) ? (failure as Error) : ended);
  };
}
