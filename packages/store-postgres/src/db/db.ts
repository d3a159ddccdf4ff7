/** The shared handle of one store (its pool and namespace), and the fence a holder's writes carry. */
import type { Pool } from "pg";

/** What every part of the store works with. */
export interface Db {
  readonly pool: Pool;
  /** Runs of different stores (plan roots) live side by side in one database under their namespace. */
  readonly namespace: string;
}

/**
 * Who a write is made for: one lease (its epoch and token), or `null` for a writer holding no lease. It travels
 * with the lease's store and checkpoints, never looked up in the store object: two leases taken through one
 * store fence their writes apart.
 */
export type Fence = { readonly epoch: number; readonly token: string } | null;

/**
 * The fence every write statement carries, as a SQL condition on the run row `r` with the epoch in `$E` and the
 * token in `$T`: the holder's own epoch and token, or (for a writer holding no lease) no live holder at all.
 * Statements lock the row (UPDATE, or SELECT … FOR SHARE) so a takeover either waits for the write to commit or
 * commits first and makes the re-checked condition false.
 */
export function fenceSql(e: string, t: string): string {
  return `((${t}::text IS NULL AND (r.holder IS NULL OR r.lease_until < now())) OR (r.epoch = ${e}::bigint AND r.holder = ${t}::text))`;
}

/** The `[$E, $T]` parameters of `fenceSql` for `fence`. */
export function fenceParams(fence: Fence): [number | null, string | null] {
  return fence === null ? [null, null] : [fence.epoch, fence.token];
}
