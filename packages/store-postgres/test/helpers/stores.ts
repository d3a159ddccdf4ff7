/**
 * A test file's stores on its cluster: `open` a store per namespace, an `admin` pool to look at or edit rows
 * behind the stores' backs, and `expire` to make a lease run out now. One afterAll closes every store opened,
 * then ends the admin pool, then destroys the cluster (stores first: their close still talks to the server).
 */
import pg from "pg";
import { afterAll } from "vitest";
import { openPostgresPlanStore, type PostgresPlanStore, type PostgresPlanStoreOptions } from "../../src/index.js";
import type { Cluster } from "./cluster.js";

export interface StoreSetupOptions {
  /** Connections of the admin pool (default 2). */
  adminMax?: number;
  /** The lease every `open` passes unless it names its own; absent, the store's default. */
  leaseMs?: number;
}

export interface StoreSetup {
  /** Opens a store on `namespace` (closed by the setup's afterAll); `options` add to or override the file's defaults. */
  open(namespace: string, options?: Omit<PostgresPlanStoreOptions, "namespace">): Promise<PostgresPlanStore>;
  admin: pg.Pool;
  /** The lease on `slug` (every run of the namespace when absent) runs out now: a holder stood still past it, without waiting. */
  expire(namespace: string, slug?: string): Promise<void>;
}

/** Makes the lease of `slug` in `namespace` (every run of it when absent) run out now, through `admin`. */
export async function expireLease(admin: pg.Pool, namespace: string, slug?: string): Promise<void> {
  if (slug === undefined) await admin.query("UPDATE phasekit_runs SET lease_until = now() - interval '1 second' WHERE namespace = $1", [namespace]);
  else await admin.query("UPDATE phasekit_runs SET lease_until = now() - interval '1 second' WHERE namespace = $1 AND slug = $2", [namespace, slug]);
}

/** Call once per test file, at its top level, after the cluster started. */
export function storeSetup(cluster: Cluster, options: StoreSetupOptions = {}): StoreSetup {
  const admin = new pg.Pool({ connectionString: cluster.url, max: options.adminMax ?? 2 });
  const stores: PostgresPlanStore[] = [];
  const defaults = options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs };
  afterAll(async () => {
    for (const s of stores) await s.close();
    await admin.end();
    cluster.destroy();
  });
  return {
    admin,
    async open(namespace, extra = {}) {
      const where = extra.pool === undefined ? { connectionString: cluster.url } : {};
      const s = await openPostgresPlanStore({ ...where, namespace, ...defaults, ...extra });
      stores.push(s);
      return s;
    },
    expire: (namespace, slug) => expireLease(admin, namespace, slug),
  };
}
