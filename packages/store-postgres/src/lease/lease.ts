/**
 * Exclusion and fencing across machines: a lease row per run with a heartbeat, and an epoch that every
 * acquisition raises. Times are the database's own `now()`, so machines with skewed clocks agree on expiry.
 * Why a lease and not a session advisory lock: a stopped holder (SIGSTOP, a frozen VM) keeps its TCP session,
 * so its advisory lock would never let anyone take over; a lease expires on its own.
 *
 * The lease is honest both ways (the file lock's rule, lock/heartbeat.ts in adapters-pi): a renewal that comes
 * late proves nothing (a starved event loop delays it as a pause does), so it is awaited, and it renews the row
 * if the epoch and token are still ours, expired or not. LOCK_LOST is said only when another holder took the run
 * (or the row is gone). A lease no renewal could confirm for a whole lease (no answer, or the row locked by
 * another session) aborts with WRITE_FAILED naming why: the run stops, nobody is blamed. Writes are refused by
 * the database once `lease_until` has passed, until a renewal lands (db.ts, fencedWrite).
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import type { LockOwner, ReleasePlanLockOutcome, StoreLock } from "@phasekit/adapters-pi";
import { closedLeaseError, refreshClock, releasedLeaseError, refreshOverdue, type RefreshStamp } from "@phasekit/adapters-pi/store-kit";
import { workflowError, type WorkflowError } from "@phasekit/core";
import { query, type Db, type LeaseGuard } from "../db/db.js";
import { isConnectionError, locked, storeError } from "../db/errors.js";
import { bounded, inDoubtMs } from "../db/in-doubt.js";
import type { HeartbeatConnection, Renewal } from "./heartbeat.js";

/** A held lease: the StoreLock the port asks for, plus the epoch and token every write of its holder carries. */
export interface Lease extends StoreLock, LeaseGuard {
  readonly epoch: number;
  readonly token: string;
  /**
   * Gives the lease up at the store's close: the heartbeat stops without touching the row (it runs out on its
   * own), and every later write or check under the lease is refused (`givenUp`, as after `release()`).
   */
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
export async function acquireLease(db: Db, heartbeat: HeartbeatConnection, slug: string, options: AcquireLeaseOptions, onReleased: () => void): Promise<Lease> {
  const token = randomUUID();
  // The fs lock's holder file names its host; so does the lease, or a reader on another machine sees a bare pid.
  const owner = { ...options.owner, pid: options.owner.pid ?? process.pid, host: options.owner.host ?? hostname() };
  for (let attempt = 0; ; attempt++) {
    const sent = refreshClock();
    let epoch: number | undefined;
    try {
      // Not retried on a cut connection: a lost reply may hide an epoch we took, and a second try would be LOCKED
      // by it until its lease runs out (the caller's retries cover that).
      const r = await query<{ epoch: string }>(
        db,
        `INSERT INTO phasekit_runs AS r (namespace, slug, epoch, holder, holder_owner, lease_until)
         VALUES ($1, $2, 1, $3, $4, now() + $5 * interval '1 millisecond')
         ON CONFLICT (namespace, slug) DO UPDATE SET epoch = r.epoch + 1, holder = EXCLUDED.holder,
           holder_owner = EXCLUDED.holder_owner, lease_until = EXCLUDED.lease_until
         WHERE r.holder IS NULL OR r.lease_until < now()
         RETURNING epoch`,
        [db.namespace, slug, token, owner, options.leaseMs],
        false,
      );
      epoch = r.rows[0] === undefined ? undefined : Number(r.rows[0].epoch);
    } catch (error) {
      throw storeError("write", slug, "lock", error);
    }
    if (epoch !== undefined) return startLease(db, heartbeat, slug, epoch, token, options.leaseMs, sent, onReleased);
    if (attempt >= options.retries || options.signal?.aborted) {
      const h = await query(db, "SELECT holder_owner FROM phasekit_runs WHERE namespace = $1 AND slug = $2", [db.namespace, slug]).catch(() => ({ rows: [] as Array<{ holder_owner?: unknown }> }));
      throw locked(slug, h.rows[0]?.holder_owner ?? "another process");
    }
    await new Promise((r) => setTimeout(r, Math.min(1000, options.leaseMs / 4)));
  }
}

function startLease(db: Db, heartbeat: HeartbeatConnection, slug: string, epoch: number, token: string, leaseMs: number, since: RefreshStamp, onReleased: () => void): Lease {
  const controller = new AbortController();
  // When the last renewal that landed was sent, on both clocks (the fs lock's rule, refreshOverdue: a suspend stops
  // the monotonic one): the row's lease runs at least leaseMs from then.
  let lastConfirmed = since;
  let stopped = false;
  let released = false;
  let givenUp: WorkflowError | undefined;
  let inFlight: Promise<boolean> | undefined;
  const lose = (error: WorkflowError): false => {
    clearInterval(timer);
    if (!controller.signal.aborted) controller.abort(error);
    return false;
  };
  const taken = (): false =>
    // The lease's store keeps fencing by this epoch: its later writes are refused as displaced, never judged by
    // the rules of a writer that holds nothing (which would accept them once the new holder released).
    lose(workflowError("store-postgres", "LOCK_LOST", `run ${slug}: the lease of epoch ${epoch} is lost: another holder took the run.`, {
      field: "epoch",
      value: epoch,
      taken: true,
      hint: "another process holds the run now; let it finish, or resume the run later",
    }));
  const unconfirmed = (last: Renewal | undefined, error: unknown): false => {
    const rowLocked = last === "busy";
    const connectionLost = !rowLocked && (error === undefined || isConnectionError(error) || storeError("write", slug, "lease", error).details.connectionLost === true);
    const why = rowLocked ? "the run's row is locked by another session" : `the database did not answer (${String((error as Error)?.message ?? error)})`;
    return lose(workflowError("store-postgres", "WRITE_FAILED", `run ${slug}: the lease of epoch ${epoch} could not be renewed for ${leaseMs} ms: ${why}; the run stops before its lease can be taken.`, {
      field: "lease",
      value: epoch,
      taken: false,
      rowLocked,
      connectionLost,
      hint: rowLocked ? "end the session holding the lock on phasekit_runs (pg_stat_activity), then resume the run" : "resume the run once the database is reachable again: acknowledged steps are kept",
    }, error));
  };
  // One renewal at a time; it keeps trying until it lands, the run is taken, or no renewal landed for a lease.
  const renewal = async (): Promise<boolean> => {
    for (let failures = 0; ; failures++) {
      if (controller.signal.aborted) return false;
      // A stopped lease is being given up: nothing renews it, so an expired one stays expired.
      if (stopped) return false;
      const sent = refreshClock();
      let outcome: Renewal | undefined;
      let error: unknown;
      try {
        outcome = await heartbeat.renew(slug, epoch, token, leaseMs);
      } catch (e) {
        error = e;
      }
      // Stopped meanwhile (released or closed): the release, not a newer holder, is why the row is no longer ours.
      if (stopped) return false;
      if (outcome === "renewed") {
        lastConfirmed = sent;
        return true;
      }
      if (outcome === "taken") return taken();
      // Lateness alone is no loss: only failures past the lease (at least two, so one late try never decides).
      if (failures >= 1 && refreshOverdue(lastConfirmed, leaseMs)) return unconfirmed(outcome, error);
      await sleep(Math.max(20, Math.min(100, leaseMs / 10)));
    }
  };
  const fresh = (): boolean => !controller.signal.aborted && !stopped && !released && !refreshOverdue(lastConfirmed, leaseMs);
  const confirm = (): Promise<boolean> => {
    if (controller.signal.aborted) return Promise.resolve(false);
    inFlight ??= renewal().finally(() => (inFlight = undefined));
    return inFlight;
  };
  const timer = setInterval(() => void confirm(), Math.max(50, Math.floor(leaseMs / 3)));
  timer.unref();
  return {
    epoch,
    token,
    signal: controller.signal,
    confirm,
    fresh,
    get givenUp() {
      return givenUp;
    },
    stop: () => {
      stopped = true;
      clearInterval(timer);
      givenUp ??= closedLeaseError("store-postgres", slug, epoch);
    },
    async assertHeld() {
      if (givenUp !== undefined) throw givenUp;
      if (!controller.signal.aborted && !released && !fresh()) await confirm();
      if (controller.signal.aborted) throw controller.signal.reason;
    },
    async release(): Promise<ReleasePlanLockOutcome> {
      stopped = true;
      clearInterval(timer);
      // Released by its holder (store-kit's rule): from now on, before the row is let go and whether or not the
      // statement lands, every later write or check under it is refused before it is sent, saying so.
      givenUp ??= releasedLeaseError("store-postgres", slug, epoch);
      // A lease in doubt (no renewal landed for a lease) is let go without waiting long: it runs out on its own.
      const inDoubt = controller.signal.aborted;
      try {
        // SKIP LOCKED: a row locked by another session is not waited for; the lease then runs out on its own.
        const q = query(
          db,
          `UPDATE phasekit_runs SET holder = NULL, holder_owner = NULL, lease_until = NULL
           WHERE ctid = (SELECT ctid FROM phasekit_runs WHERE namespace = $1 AND slug = $2 AND epoch = $3 AND holder = $4 FOR UPDATE SKIP LOCKED) RETURNING 1`,
          [db.namespace, slug, epoch, token],
        );
        const r = inDoubt ? await bounded(q, inDoubtMs(leaseMs), "release of a lease in doubt") : await q;
        // Let go either way (a displaced lease's own store still refuses its writes: it fences by its epoch);
        // after a failed query the lease may still be held, so the store object keeps it.
        released = true;
        onReleased();
        return { ok: true, released: r.rowCount === 1 };
      } catch (error) {
        return { ok: false, error: storeError("write", slug, "release", error) };
      }
    },
  };
}
