/**
 * Every wait the store makes is bounded: the server-side timeouts every connection of the store's pool starts
 * with, the client-side bound on a reply (a partition sends no error, only silence), TCP keepalive, and the
 * connect timeout. Defaults follow the lease, so a run whose database stops answering ends within about one
 * lease (docs/postgres.md, "Timeouts").
 */
import { workflowError } from "@phasekit/core";
import { inDoubtMs } from "./in-doubt.js";

/** The timeouts of a store (ms). Each defaults from the store's lease; 0 turns a server-side one off. */
export interface PostgresTimeouts {
  /** Longest a statement may run on the server (`statement_timeout`). Default: the lease, at least 5 s. */
  statementMs?: number | undefined;
  /** Longest a statement waits for a row or table lock (`lock_timeout`). Default: half the lease, at most 5 s. */
  lockMs?: number | undefined;
  /** A session idle inside a transaction this long is ended by the server (`idle_in_transaction_session_timeout`). Default 30 s. */
  idleInTransactionMs?: number | undefined;
  /** Longest the client waits for any reply before it gives the connection up. Default: statementMs + 1 s. */
  replyMs?: number | undefined;
  /**
   * Longest a statement waits for a connection (`connectionTimeoutMillis`: a new one, or a pooled one to come
   * free). Default: the lease, at least 5 s (a busy pool is load, not a fault).
   */
  connectMs?: number | undefined;
  /** TCP keepalive: idle time before the first probe. Default 5 s. */
  keepAliveMs?: number | undefined;
  /**
   * Longest `close()` waits for the step writes in flight and the count's raises before it gives them up (and
   * cuts the connections its own pool still has open). Default: what a lease in doubt gets (db/in-doubt.ts: a
   * quarter of the lease, at most 0.5 s), so a partition at close still ends the run within the lease plus 2 s.
   * Raise it for outputs whose write can take longer on a healthy database.
   */
  closeMs?: number | undefined;
}

/** The timeouts with every default filled in. */
export type Timeouts = Required<PostgresTimeouts>;

/** Fills in the defaults for a store whose default lease is `leaseMs`; INVALID_OPTIONS naming a bad field. */
export function resolveTimeouts(given: PostgresTimeouts | undefined, leaseMs: number): Timeouts {
  for (const [field, value] of Object.entries(given ?? {})) {
    if (value !== undefined && (typeof value !== "number" || !Number.isInteger(value) || value < 0)) {
      throw workflowError("store-postgres", "INVALID_OPTIONS", `timeouts.${field} must be a whole number of ms ≥ 0, not ${JSON.stringify(value)}.`, {
        field: `timeouts.${field}`,
        value,
        hint: "pass milliseconds, e.g. timeouts: { lockMs: 2000 }",
      });
    }
  }
  const statementMs = given?.statementMs ?? Math.max(5_000, leaseMs);
  return {
    statementMs,
    lockMs: given?.lockMs ?? Math.max(100, Math.min(5_000, Math.floor(leaseMs / 2))),
    idleInTransactionMs: given?.idleInTransactionMs ?? 30_000,
    replyMs: given?.replyMs ?? (statementMs === 0 ? 0 : statementMs + 1_000),
    connectMs: given?.connectMs ?? Math.max(5_000, leaseMs),
    keepAliveMs: given?.keepAliveMs ?? 5_000,
    closeMs: given?.closeMs ?? inDoubtMs(leaseMs),
  };
}

/** The `pg` client settings that apply `t` to every connection (pool or heartbeat). */
export function connectionSettings(t: Timeouts): Record<string, unknown> {
  return {
    statement_timeout: t.statementMs || undefined,
    lock_timeout: t.lockMs || undefined,
    idle_in_transaction_session_timeout: t.idleInTransactionMs || undefined,
    query_timeout: t.replyMs || undefined,
    connectionTimeoutMillis: t.connectMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: t.keepAliveMs,
  };
}
