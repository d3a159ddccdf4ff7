/** The shared handle of one store: its pool, its namespace and the leases this process holds. */
import type { Pool } from "pg";

/** What every part of the store works with. */
export interface Db {
  readonly pool: Pool;
  /** Runs of different stores (plan roots) live side by side in one database under their namespace. */
  readonly namespace: string;
  /** The epoch and token of every run this store holds, by slug. */
  readonly held: Map<string, { epoch: number; token: string }>;
}

/**
 * The fence every write statement carries, as a SQL condition on the run row `r` with the epoch in `$E` and the
 * token in `$T`: the holder's own epoch and token, or (for a store that holds no lease on the run) no live
 * holder at all. Statements lock the row (UPDATE, or SELECT … FOR SHARE) so a takeover either waits for the
 * write to commit or commits first and makes the re-checked condition false.
 */
export function fenceSql(e: string, t: string): string {
  return `((${t}::text IS NULL AND (r.holder IS NULL OR r.lease_until < now())) OR (r.epoch = ${e}::bigint AND r.holder = ${t}::text))`;
}

/** The `[$E, $T]` parameters of `fenceSql` for `slug`. */
export function fenceParams(db: Db, slug: string): [number | null, string | null] {
  const h = db.held.get(slug);
  return h === undefined ? [null, null] : [h.epoch, h.token];
}
