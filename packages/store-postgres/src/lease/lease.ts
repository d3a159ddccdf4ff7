/**
 * Exclusion and fencing across machines: a lease row per run with a heartbeat, and an epoch that every
 * acquisition raises. Times are the database's own `now()`, so machines with skewed clocks agree on expiry.
 * Why a lease and not a session advisory lock: a stopped holder (SIGSTOP, a frozen VM) keeps its TCP session,
 * so its advisory lock would never let anyone take over; a lease expires on its own.
 */
import { performance } from "node:perf_hooks";
import { randomUUID } from "node:crypto";
import type { LockOwner, ReleasePlanLockOutcome, StoreLock } from "@phasekit/adapters-pi";
import type { Db } from "../db/db.js";
import { workflowError } from "@phasekit/core";
import { isConnectionError, locked, storeError } from "../db/errors.js";

/** A held lease: the StoreLock the port asks for, plus the epoch and token every write of its holder carries. */
export interface Lease extends StoreLock {
  readonly epoch: number;
  readonly token: string;
  /** Stops the heartbeat without touching the row (the process is going away). */
  stop(): void;
}

/** Options of `acquireLease`. */
export interface AcquireLeaseOptions {
  owner: LockOwner;
  leaseMs: number;
  retries: number;
  signal?: AbortSignal;
}

/**
 * Takes the run in one statement: insert the row, or bump its epoch when nobody holds it or the lease expired.
 * LOCKED (naming the holder) when a live lease exists after `retries` more tries.
 */
export async function acquireLease(db: Db, slug: string, options: AcquireLeaseOptions, onReleased: () => void): Promise<Lease> {
  const token = randomUUID();
  const owner = { ...options.owner, pid: options.owner.pid ?? process.pid };
  for (let attempt = 0; ; attempt++) {
    const sent = performance.now();
    let epoch: number | undefined;
    try {
      const r = await db.pool.query<{ epoch: string }>(
        `INSERT INTO phasekit_runs AS r (namespace, slug, epoch, holder, holder_owner, lease_until)
         VALUES ($1, $2, 1, $3, $4, now() + $5 * interval '1 millisecond')
         ON CONFLICT (namespace, slug) DO UPDATE SET epoch = r.epoch + 1, holder = EXCLUDED.holder,
           holder_owner = EXCLUDED.holder_owner, lease_until = EXCLUDED.lease_until
         WHERE r.holder IS NULL OR r.lease_until < now()
         RETURNING epoch`,
        [db.namespace, slug, token, owner, options.leaseMs],
      );
      epoch = r.rows[0] === undefined ? undefined : Number(r.rows[0].epoch);
    } catch (error) {
      throw storeError("write", slug, "lock", error);
    }
    if (epoch !== undefined) return startLease(db, slug, epoch, token, options.leaseMs, sent, onReleased);
    if (attempt >= options.retries || options.signal?.aborted) {
      const h = await db.pool.query("SELECT holder_owner FROM phasekit_runs WHERE namespace = $1 AND slug = $2", [db.namespace, slug]).catch(() => ({ rows: [] }));
      throw locked(slug, h.rows[0]?.holder_owner ?? "another process");
    }
    await new Promise((r) => setTimeout(r, Math.min(1000, options.leaseMs / 4)));
  }
}

function startLease(db: Db, slug: string, epoch: number, token: string, leaseMs: number, since: number, onReleased: () => void): Lease {
  const controller = new AbortController();
  let lastRenewed = since;
  let beating = false;
  let lastError: unknown;
  const lose = (why: string, unreachable: boolean): void => {
    if (controller.signal.aborted) return;
    clearInterval(timer);
    // The lease's store keeps fencing by this epoch: its later writes are refused as displaced, never judged by
    // the rules of a writer that holds nothing (which would accept them once the new holder released).
    controller.abort(
      workflowError("store-postgres", "LOCK_LOST", `run ${slug}: the lease of epoch ${epoch} is lost: ${why}.`, {
        field: "epoch",
        value: epoch,
        connectionLost: unreachable,
        hint: unreachable ? "resume the run once the database is reachable again" : "another process holds the run now",
      }, lastError),
    );
  };
  const beat = async (): Promise<void> => {
    // Judged locally too: with the server unreachable, the lease runs out while no query can say so.
    if (performance.now() - lastRenewed > leaseMs) return lose("no heartbeat got through before it ran out", beating || isConnectionError(lastError));
    if (beating) return;
    beating = true;
    const sent = performance.now();
    try {
      const r = await db.pool.query(
        `UPDATE phasekit_runs SET lease_until = now() + $5 * interval '1 millisecond'
         WHERE namespace = $1 AND slug = $2 AND epoch = $3 AND holder = $4 AND lease_until >= now() RETURNING 1`,
        [db.namespace, slug, epoch, token, leaseMs],
      );
      if (r.rowCount === 1) (lastRenewed = sent), (lastError = undefined);
      else lose("the heartbeat found it expired or taken", false);
    } catch (error) {
      lastError = error;
      if (performance.now() - lastRenewed > leaseMs) lose("the heartbeat could not reach the database", isConnectionError(error));
    } finally {
      beating = false;
    }
  };
  const timer = setInterval(() => void beat(), Math.max(50, Math.floor(leaseMs / 3)));
  timer.unref();
  return {
    epoch,
    token,
    signal: controller.signal,
    stop: () => clearInterval(timer),
    async assertHeld() {
      if (controller.signal.aborted) throw controller.signal.reason;
      let held: boolean;
      try {
        const r = await db.pool.query(
          "SELECT 1 FROM phasekit_runs WHERE namespace = $1 AND slug = $2 AND epoch = $3 AND holder = $4 AND lease_until >= now()",
          [db.namespace, slug, epoch, token],
        );
        held = r.rowCount === 1;
      } catch (error) {
        throw storeError("read", slug, "assertHeld", error);
      }
      if (!held) {
        lose("it expired or was taken", false);
        throw controller.signal.reason;
      }
    },
    async release(): Promise<ReleasePlanLockOutcome> {
      clearInterval(timer);
      try {
        const r = await db.pool.query(
          "UPDATE phasekit_runs SET holder = NULL, holder_owner = NULL, lease_until = NULL WHERE namespace = $1 AND slug = $2 AND epoch = $3 AND holder = $4 RETURNING 1",
          [db.namespace, slug, epoch, token],
        );
        // Let go either way (a displaced lease's own store still refuses its writes: it fences by its epoch);
        // after a failed query the lease may still be held, so the store object keeps it.
        onReleased();
        return { ok: true, released: r.rowCount === 1 };
      } catch (error) {
        return { ok: false, error: storeError("write", slug, "release", error) };
      }
    },
  };
}
