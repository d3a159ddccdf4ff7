/** `openPostgresPlanStore`: the PlanStore port on PostgreSQL, shared by every machine that reaches the database. */
import pg from "pg";
import { workflowError } from "@phasekit/core";
import { validateSlug, type PlanRunEntry, type PlanStore, type CheckpointStore } from "@phasekit/adapters-pi";
import { validateMetadata } from "@phasekit/adapters-pi";
import { migrate, type MigrationReport } from "../schema/migrations.js";
import { acquireLease } from "../lease/lease.js";
import type { Db } from "../db/db.js";
import { storeError } from "../db/errors.js";
import { createPgCheckpoints } from "./checkpoints.js";
import { clearControl, fileControl, readControl } from "./control.js";
import { gcRuns } from "./retention.js";
import { appendRunJournal, readRunJournal, readRunMetadata, runLabel, writeRunMetadata } from "./runs.js";

/** Default lease: a holder silent this long (ms) may be displaced. */
export const DEFAULT_LEASE_MS = 10_000;

/** Options of `openPostgresPlanStore`. */
export interface PostgresPlanStoreOptions {
  /** A libpq connection string (`postgres://user@host:port/db`); or pass `pool`. */
  connectionString?: string;
  /** A pool you own (not ended by `close`). */
  pool?: pg.Pool;
  /** Runs of one store live under this name; stores with different names never see each other's runs. */
  namespace?: string;
  /** Lease length in ms when `lock` is given no `staleMs` (default 10 s). */
  leaseMs?: number;
}

/** The PostgreSQL store: the PlanStore port (control requests included: any machine may file one). */
export interface PostgresPlanStore extends PlanStore {
  /** The migrations this process applied when the store opened. */
  readonly migrations: MigrationReport;
}

/** Connects, applies pending migrations (safe when many processes start at once) and returns the store. */
export async function openPostgresPlanStore(options: PostgresPlanStoreOptions): Promise<PostgresPlanStore> {
  const ownPool = options.pool === undefined;
  if (ownPool && typeof options.connectionString !== "string") {
    throw workflowError("store-postgres", "INVALID_OPTIONS", "openPostgresPlanStore needs connectionString or pool.", { field: "connectionString", hint: "pass postgres://user@host:port/db" });
  }
  const namespace = options.namespace ?? "default";
  if (namespace === "" || namespace.length > 200) {
    throw workflowError("store-postgres", "INVALID_OPTIONS", "namespace must be 1 to 200 characters.", { field: "namespace", value: namespace });
  }
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const makePool = (): pg.Pool => {
    const p = options.pool ?? new pg.Pool({ connectionString: options.connectionString, connectionTimeoutMillis: Math.min(5_000, leaseMs), max: 10 });
    // An idle client whose server went away emits "error" on the pool; unhandled, it would crash the process.
    if (ownPool) p.on("error", () => undefined);
    return p;
  };
  const db: { -readonly [K in keyof Db]: Db[K] } = { pool: makePool(), namespace, held: new Map() };
  const migrations = await migrate(db.pool).catch(async (error: unknown) => {
    if (ownPool) await db.pool.end().catch(() => undefined);
    throw error;
  });
  const leases = new Set<{ stop(): void }>();
  const slugOf = (slug: string): string => {
    const v = validateSlug(slug);
    if (!v.ok) throw v.error;
    return v.slug;
  };
  const settle = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (error) {
      if ((error as { name?: unknown })?.name === "WorkflowError") return { ok: false, error } as T;
      throw error;
    }
  };

  return {
    planRoot: `postgres:${namespace}`,
    migrations,
    runDir: async (slug) => runLabel(db, slugOf(slug)),
    readMetadata: (slug) => settle(() => readRunMetadata(db, slugOf(slug))),
    writeMetadata: (slug, next, expected) =>
      settle(async () => {
        const s = slugOf(slug);
        if (next.slug !== s) {
          return { ok: false, error: workflowError("store-postgres", "INVALID_STATE", `metadata for run ${s} names slug ${JSON.stringify(next.slug)}.`, { field: "slug", value: next.slug }) };
        }
        return writeRunMetadata(db, s, next, expected);
      }),
    readJournal: (slug) => settle(() => readRunJournal(db, slugOf(slug))),
    appendJournal: (slug, entry) => settle(() => appendRunJournal(db, slugOf(slug), entry)),
    lock: (slug, opts) =>
      settle(async () => {
        const s = slugOf(slug);
        const lease = await acquireLease(db, s, { owner: opts.owner, leaseMs: opts.staleMs ?? leaseMs, retries: opts.retries ?? 0, ...(opts.signal ? { signal: opts.signal } : {}) }, () => {
          if (db.held.get(s)?.token === lease.token) db.held.delete(s);
          leases.delete(lease);
        });
        db.held.set(s, { epoch: lease.epoch, token: lease.token });
        leases.add(lease);
        return { ok: true, lock: lease };
      }),
    async list() {
      const r = await db.pool
        .query<{ slug: string; metadata: unknown }>("SELECT slug, metadata FROM phasekit_runs WHERE namespace = $1 ORDER BY slug COLLATE \"C\"", [namespace])
        .catch((error: unknown) => Promise.reject(storeError("read", "*", "list", error)));
      return r.rows.map((row): PlanRunEntry => {
        if (row.metadata === null) return { slug: row.slug, ok: true, metadata: null };
        const v = validateMetadata(runLabel(db, row.slug), row.metadata);
        return v.ok ? { slug: row.slug, ok: true, metadata: v.metadata } : { slug: row.slug, ok: false, error: v.error };
      });
    },
    async checkpoints(slug, opts): Promise<CheckpointStore> {
      return createPgCheckpoints(db, slugOf(slug), opts.now);
    },
    gc: (opts) => gcRuns(db, opts).catch((error: unknown) => Promise.reject(storeError("write", "*", "gc", error))),
    requestControl: (slug, signal, request = {}) => settle(() => fileControl(db, slugOf(slug), signal, request)),
    readControl: (slug, signal) => settle(() => readControl(db, slugOf(slug), signal)),
    clearControl: (slug, request) => settle(() => clearControl(db, slugOf(slug), request)),
    async close() {
      // Leases still held stop beating (they expire on their own); a closed store can be used again.
      for (const l of leases) l.stop();
      leases.clear();
      if (!ownPool) return;
      const old = db.pool;
      db.pool = makePool();
      await old.end().catch(() => undefined);
    },
  };
}
