/** How database failures become phasekit errors: one place decides which codes a caller can meet. */
import { isWorkflowError, workflowError, type WorkflowError } from "@phasekit/core";

const SCOPE = "store-postgres";

// SQLSTATE classes 08 (connection exception) and 57P (operator intervention: shutdown, crash) plus socket errors
// mean the server is out of reach, not that the statement was wrong.
const CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "ENOTFOUND", "EHOSTUNREACH", "EAI_AGAIN", "57P01", "57P02", "57P03"]);

/** True when `error` says the database could not be reached (the statement may or may not have committed). */
export function isConnectionError(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (e === null || typeof e !== "object") return false;
  if (typeof e.code === "string" && (CONNECTION_CODES.has(e.code) || e.code.startsWith("08"))) return true;
  return typeof e.message === "string" && /Connection terminated|connection timeout|Client has encountered a connection error/i.test(e.message);
}

/** Why a statement gave up waiting, when it did: a lock it could not get, or a timeout of the store's. */
export function waitBound(error: unknown): "lock" | "statement" | "reply" | "connect" | undefined {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (e === null || typeof e !== "object") return undefined;
  if (e.code === "55P03") return "lock";
  if (e.code === "57014") return "statement";
  if (typeof e.message !== "string") return undefined;
  if (/timeout exceeded when trying to connect|Connection terminated due to connection timeout|^timeout expired$/i.test(e.message)) return "connect";
  return /Query read timeout/i.test(e.message) ? "reply" : undefined;
}

const WAIT_HINTS = {
  lock: "another session holds a lock on the run's row or a table (an operator's transaction, a migration): end it, or raise timeouts.lockMs",
  statement: "the statement ran past timeouts.statementMs: check the server's load, or raise the timeout",
  reply: "the database did not answer within timeouts.replyMs (network partition or an overloaded server): resume the run once it answers; acknowledged steps are kept",
  connect: "no connection within timeouts.connectMs: the server is unreachable, or every pooled connection stayed busy (raise the pool's max or timeouts.connectMs)",
} as const;

/**
 * Wraps a driver error as READ_FAILED / WRITE_FAILED naming the run and what was being done; `connectionLost`
 * in the details tells a caller that retrying after the server is back is safe (every write is idempotent or
 * fenced); `timedOut` names the bound a wait hit (lock, statement, reply).
 */
export function storeError(kind: "read" | "write", slug: string, what: string, error: unknown): WorkflowError {
  if (isWorkflowError(error)) return error;
  const timedOut = waitBound(error);
  const connectionLost = timedOut === "reply" || timedOut === "connect" || isConnectionError(error);
  const code = kind === "read" ? "READ_FAILED" : "WRITE_FAILED";
  const why = timedOut === "lock" ? "a lock wait ran out (the row or table is locked by another session)" : timedOut !== undefined ? `it timed out (${timedOut})` : connectionLost ? "the database connection was lost" : String((error as Error)?.message ?? error);
  return workflowError(SCOPE, code, `run ${slug}: ${what} failed: ${why}.`, {
    field: what,
    value: slug,
    connectionLost,
    ...(timedOut === undefined ? {} : { timedOut }),
    hint: timedOut !== undefined ? WAIT_HINTS[timedOut] : connectionLost ? "resume the run once the database is reachable again: acknowledged steps are kept" : "check the database log",
  }, error);
}

/** LOCK_LOST: a write carried an epoch the database no longer accepts (another holder took the run over). */
export function lockLost(slug: string, epoch: number, what: string): WorkflowError {
  return workflowError(SCOPE, "LOCK_LOST", `run ${slug}: ${what} refused: epoch ${epoch} was displaced by a newer holder.`, {
    field: "epoch",
    value: epoch,
    hint: "this process no longer holds the run; let the new holder finish or resume it later",
  });
}

/** LOCKED: a live holder has the run. */
export function locked(slug: string, holder: unknown): WorkflowError {
  return workflowError(SCOPE, "LOCKED", `run ${slug} is held by ${JSON.stringify(holder)}.`, {
    holder,
    hint: "wait for the holder to finish, or for its lease to expire if it died; a holder writes through its lock's store (lock.store)",
  });
}

/** LOCK_NOT_OWNED: a write through a store object holding several leases on the run cannot say whose it is. */
export function ambiguousHolder(slug: string, leases: number): WorkflowError {
  return workflowError(SCOPE, "LOCK_NOT_OWNED", `run ${slug}: this store object holds ${leases} leases on the run, so a write through it belongs to none of them.`, {
    field: "lease",
    value: leases,
    hint: "write through the store of the lease you hold: (await store.lock(slug, …)).lock.store",
  });
}

/**
 * True when the statement's connection was cut under it by the server or the network (terminated backend, reset
 * socket), as opposed to a server that cannot be reached at all: a fresh connection may well succeed.
 */
export function isTerminatedConnection(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (e === null || typeof e !== "object") return false;
  if (e.code === "57P01" || e.code === "ECONNRESET" || e.code === "EPIPE") return true;
  return typeof e.message === "string" && /Connection terminated unexpectedly|Client has encountered a connection error|terminating connection due to administrator command/i.test(e.message);
}

/**
 * A failure to connect or to authenticate, as a typed error with the fix: the server out of reach (refused,
 * unknown host, connect timeout: READ_FAILED with connectionLost), or a connection string the server refuses
 * (wrong password, unknown role or database, no pg_hba entry: INVALID_CONFIG). Anything else is a READ_FAILED.
 */
export function connectionFailure(error: unknown, what: string): WorkflowError {
  if (isWorkflowError(error)) return error;
  const e = error as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === "string" ? e.code : undefined;
  const message = String(e?.message ?? error);
  const config = (why: string, hint: string): WorkflowError =>
    workflowError(SCOPE, "INVALID_CONFIG", `${what}: the database refused the connection: ${why}.`, { field: "connectionString", sqlState: code, hint }, error);
  if (code === "28P01") return config(message, "check the password (in the connection string or PGPASSWORD) of the role you connect as");
  if (code === "28000") return config(message, "check the role name, and that pg_hba.conf lets it connect from this host");
  if (code === "3D000") return config(message, "check the database name in the connection string, or create the database");
  if (code === "42501") return config(message, "grant the role SELECT, INSERT, UPDATE, DELETE on the phasekit_* tables (docs/postgres.md, Roles)");
  const unreachable = isConnectionError(error) || waitBound(error) === "reply" || waitBound(error) === "connect";
  return workflowError(SCOPE, "READ_FAILED", `${what}: cannot reach the database: ${message}.`, {
    field: "connectionString",
    connectionLost: unreachable,
    ...(code === undefined ? {} : { sqlState: code }),
    hint: unreachable ? "check the host and port in the connection string, and that the server is running and reachable" : "check the database log",
  }, error);
}
