/** How database failures become phasekit errors: one place decides which codes a caller can meet. */
import { isWorkflowError, workflowError, type WorkflowError } from "@phasekit/core";

const SCOPE = "store-postgres";

// SQLSTATE classes 08 (connection exception) and 57P (operator intervention: shutdown, crash) plus socket errors
// mean the server is out of reach, not that the statement was wrong.
const CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "ENOTFOUND", "EHOSTUNREACH", "57P01", "57P02", "57P03"]);

/** True when `error` says the database could not be reached (the statement may or may not have committed). */
export function isConnectionError(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (e === null || typeof e !== "object") return false;
  if (typeof e.code === "string" && (CONNECTION_CODES.has(e.code) || e.code.startsWith("08"))) return true;
  return typeof e.message === "string" && /Connection terminated|connection timeout|Client has encountered a connection error/i.test(e.message);
}

/**
 * Wraps a driver error as READ_FAILED / WRITE_FAILED naming the run and what was being done; `connectionLost`
 * in the details tells a caller that retrying after the server is back is safe (every write is idempotent or
 * fenced).
 */
export function storeError(kind: "read" | "write", slug: string, what: string, error: unknown): WorkflowError {
  if (isWorkflowError(error)) return error;
  const connectionLost = isConnectionError(error);
  const code = kind === "read" ? "READ_FAILED" : "WRITE_FAILED";
  const why = connectionLost ? "the database connection was lost" : String((error as Error)?.message ?? error);
  return workflowError(SCOPE, code, `run ${slug}: ${what} failed: ${why}.`, {
    field: what,
    value: slug,
    connectionLost,
    hint: connectionLost ? "resume the run once the database is reachable again: acknowledged steps are kept" : "check the database log",
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
