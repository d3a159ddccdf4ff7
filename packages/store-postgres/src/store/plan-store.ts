/** `openPostgresPlanStore`: the PlanStore port on PostgreSQL, shared by every machine that reaches the database. */
import pg from "pg";
import { workflowError, type Result } from "@phasekit/core";
import { journalAfter, validateSlug } from "@phasekit/adapters-pi/store-kit";
import { type PlanRunEntry, type PlanStore, type StoreLock, type StoreLockOptions } from "@phasekit/adapters-pi";
import { migrate, type MigrationReport } from "../schema/migrations.js";
import { checkSchema } from "../schema/check.js";
import { acquireLease, type Lease } from "../lease/lease.js";
import { HeartbeatConnection } from "../lease/heartbeat.js";
import { query, type Db, type Fence } from "../db/db.js";
import { connectionFailure, storeError } from "../db/errors.js";
import { connectionSettings, resolveTimeouts, type PostgresTimeouts } from "../db/settings.js";
import { inDoubtMs } from "../db/in-doubt.js";
import { openOwnPool, type OwnPool } from "../db/own-pool.js";
import { reserveRunId, type RandomBytes } from "./run-ids.js";
import { fileControl, readControl, withdrawControl } from "./control.js";
import { holderWrites, LeaseBook, settle } from "./holder-writes.js";
import { writeCountsOf } from "./write-count.js";
import { gcRuns } from "./retention.js";
import { readRunJournal, readRunMetadata, runLabel } from "./runs.js";
import { readLease, readStepOutput } from "./readers.js";
import { listRunFacts, runEntry, runSignature } from "./run-facts.js";
import { listForks } from "./forks.js";

/** Default lease: a holder silent this long (ms) may be displaced. */
export const DEFAULT_LEASE_MS = 10_000;

/** Options of `openPostgresPlanStore`. */
export interface PostgresPlanStoreOptions {
  /** A libpq connection string (`postgres://user@host:port/db`); or pass `pool`. */
  connectionString?: string | undefined;
  /** A pool you own (not ended by `close`). */
  pool?: pg.Pool | undefined;
  /** Runs of one store live under this name; stores with different names never see each other's runs. */
  namespace?: string | undefined;
  /** Lease length in ms when `lock` is given no `staleMs` (default 10 s). */
  leaseMs?: number | undefined;
  /** Every wait's bound (statement, lock, idle in transaction, reply, connect, keepalive); defaults follow `leaseMs`. */
  timeouts?: PostgresTimeouts | undefined;
  /**
   * Apply pending migrations before opening (the role then needs to own the schema). Default false: opening
   * only checks the schema version and needs SELECT/INSERT/UPDATE/DELETE; migrate with `migrate()`.
   */
  migrate?: boolean | undefined;
}

/** A lease on a run: the port's lock, with the store its holder writes through and the epoch it fences by. */
export interface PostgresLock extends StoreLock {
  readonly epoch: number;
  /** Every write of the holder to the locked run goes through this store, fenced by this lease's epoch. */
  readonly store: PlanStore;
}

/** The PostgreSQL store: the PlanStore port (control requests included: any machine may file one). */
export interface PostgresPlanStore extends PlanStore {
  /** The schema version found, and the migrations this open applied (none unless `migrate: true`). */
  readonly migrations: MigrationReport;
  /** Takes a lease on the run (a new epoch); write as its holder through `lock.store`. */
  lock(slug: string, options: StoreLockOptions): Promise<Result<{ lock: PostgresLock }>>;
  /**
   * Draws a new run id and reserves it in the database (its run row, under the primary key), drawing again on
   * a conflict: two machines never get the same new id. Pass the id to runWorkflow as `target`.
   */
  reserveRun(random?: RandomBytes): Promise<Result<{ slug: string }>>;
}

/**
 * Connects, checks the schema version and the role's rights (applies pending migrations first with `migrate:
 * true`) and returns the store. Every failure is a typed WorkflowError with the fix.
 */
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
  const timeouts = resolveTimeouts(options.timeouts, leaseMs);
  const settings = connectionSettings(timeouts);
  let own: OwnPool | undefined;
  const makePool = (): pg.Pool => {
    if (options.pool !== undefined) return options.pool;
    own = openOwnPool({ connectionString: options.connectionString, max: 10, ...settings } as pg.PoolConfig);
    return own.pool;
  };
  const db: { -readonly [K in keyof Db]: Db[K] } = { pool: makePool(), namespace };
  // The heartbeat's own connection: a renewal (one small statement, never queued behind the pool) is bounded to a
  // quarter of the lease, so two tries fit in a lease and a partition aborts the lease soon after it runs out.
  const beatMs = Math.max(500, Math.floor(leaseMs / 4));
  const base = ownPool ? { connectionString: options.connectionString } : (db.pool as unknown as { options: pg.ClientConfig }).options;
  const heartbeat = new HeartbeatConnection({ ...base, ...settings, statement_timeout: beatMs, query_timeout: beatMs + 250, connectionTimeoutMillis: beatMs } as pg.ClientConfig, namespace);
  let migrations: MigrationReport;
  try {
    const applied = options.migrate === true ? (await migrate(db.pool)).applied : [];
    migrations = { applied, version: await checkSchema(db) };
  } catch (error) {
    await own?.end(inDoubtMs(leaseMs));
    throw connectionFailure(error, "opening the store");
  }
  const leases = new LeaseBook();
  const slugOf = (slug: string): string => {
    const v = validateSlug(slug);
    if (!v.ok) throw v.error;
    return v.slug;
  };

  const store: PostgresPlanStore = {
    planRoot: `postgres:${namespace}`,
    migrations,
    runDir: async (slug) => runLabel(db, slugOf(slug)),
    readMetadata: (slug) => settle(() => readRunMetadata(db, slugOf(slug))),
    readJournal: (slug, options) => settle(async () => readRunJournal(db, slugOf(slug), journalAfter(options))),
    // Through the store object: its one lease on the run, if it holds exactly one (see holder-writes.ts).
    ...holderWrites(db, slugOf, (slug) => leases.soleFence(slug)),
    lock: (slug, opts) =>
      settle(async () => {
        const s = slugOf(slug);
        const lease: Lease = await acquireLease(db, heartbeat, s, { owner: opts.owner, leaseMs: opts.staleMs ?? leaseMs, retries: opts.retries ?? 0, ...(opts.signal ? { signal: opts.signal } : {}) }, () =>
          leases.delete(s, lease),
        );
        leases.add(s, lease);
        const own: Fence = { epoch: lease.epoch, token: lease.token, lease };
        // The holder's store: this lease's fence for its run, whatever the store object takes later.
        const view: PlanStore = { ...store, ...holderWrites(db, slugOf, (other) => (other === s ? own : leases.soleFence(other))), close: async () => undefined };
        return { ok: true, lock: Object.assign(lease, { store: view }) };
      }),
    async list() {
      const r = await query<{ slug: string; metadata: unknown }>(db, "SELECT slug, metadata FROM phasekit_runs WHERE namespace = $1 ORDER BY slug COLLATE \"C\"", [namespace]).catch((error: unknown) => Promise.reject(storeError("read", "*", "list", error)));
      return r.rows.map((row): PlanRunEntry => runEntry(db, row.slug, row.metadata));
    },
    gc: (opts) => gcRuns(db, opts).catch((error: unknown) => Promise.reject(storeError("write", "*", "gc", error))),
    requestControl: (slug, signal, request = {}) => settle(() => fileControl(db, slugOf(slug), signal, request)),
    readControl: (slug, signal) => settle(() => readControl(db, slugOf(slug), signal)),
    withdrawControl: (slug, request) => settle(() => withdrawControl(db, slugOf(slug), request)),
    reserveRun: (random) => settle(async () => ({ ok: true, slug: await reserveRunId(db, random) })),
    readLease: (slug) => readLease(db, slugOf(slug)),
    readStepOutput: (slug, record) => readStepOutput(db, slugOf(slug), record),
    listRunFacts: () => listRunFacts(db),
    listForks: (slug) => listForks(db, slugOf(slug)),
    runSignature: (slug) => runSignature(db, slugOf(slug)),
    async close() {
      // Leases still held stop beating (they expire on their own); a closed store can be used again. Then, once
      // the step writes already sent have settled, those not counted yet for readers are counted, while the pool
      // still takes statements: no count is sent after close() returned. The whole close waits at most
      // timeouts.closeMs (by default what a database in doubt gets, db/in-doubt.ts): a partition, a row lock on the count, a write hung in flight do
      // not hold it; what it gives up is dropped (the stopped leases running out change the signature), and the
      // connections of the store's own pool still open then are cut.
      const bound = timeouts.closeMs;
      const until = performance.now() + bound;
      leases.stopAll();
      heartbeat.close();
      await writeCountsOf(db).flush(bound);
      if (own === undefined) return;
      const old = own;
      db.pool = makePool();
      await old.end(until - performance.now());
    },
  };
  return store;
}
