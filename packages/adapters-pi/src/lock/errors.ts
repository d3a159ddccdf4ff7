/** The typed errors of the plan lock, each naming the lock directory and, when known, the holder. */
import { workflowError, type WorkflowError } from "@phasekit/core";
import { fsErrorCode } from "../io/fs-port.js";
import { describeHolder, readLockHolder, type LockHolder } from "./holder.js";

const SCOPE = "lock";

/** What the messages need to know about the lock. */
export interface LockErrorContext {
  runDir: string;
  lockDir: string;
  staleMs: number;
}

/** LOCKED: the lock is busy; names the holder read from its holder file. */
export async function busyError(s: LockErrorContext, why: string): Promise<WorkflowError> {
  const seen = await readLockHolder(s.runDir, { staleMs: s.staleMs }).catch(() => null);
  const holder = seen?.held ? seen.holder : null;
  const who = seen?.held ? describeHolder(holder) : "another process (it was released just now; retry)";
  return workflowError(SCOPE, "LOCKED", `run folder ${s.runDir} is locked by ${who}; ${why}.`, {
    file: s.lockDir,
    value: holder,
    hint: `wait for that run to finish, or retry: a holder that stopped refreshing is taken over after ${s.staleMs} ms`,
  });
}

/** LOCK_NOT_OWNED: a release by a holder whose lock was taken over. */
export function notOwnedError(s: LockErrorContext, holder: LockHolder): WorkflowError {
  return workflowError(SCOPE, "LOCK_NOT_OWNED", `not releasing ${s.lockDir}: it was taken over from this holder (${describeHolder(holder)}); the new holder's lock was left in place.`, {
    file: s.lockDir,
    value: holder.token,
    hint: "treat the run as lost by this process: re-acquire the lock and re-read workflow.json",
  });
}

/** LOCKED: a stale lock with foreign files is left for a human. */
export function junkError(s: LockErrorContext, error: unknown): WorkflowError {
  return workflowError(SCOPE, "LOCKED", `the stale lock ${s.lockDir} holds files phasekit did not write, so it is not taken over.`, {
    file: s.lockDir,
    hint: `check that no process uses ${s.runDir}, then remove ${s.lockDir} by hand`,
  }, error);
}

/** NOT_FOUND for a missing run folder, WRITE_FAILED for any other file-system failure. */
export function ioError(s: LockErrorContext, error: unknown): WorkflowError {
  const code = fsErrorCode(error);
  if (code === "ENOENT") {
    return workflowError(SCOPE, "NOT_FOUND", `cannot lock ${s.runDir}: the run folder does not exist.`, {
      file: s.runDir,
      hint: "create the run folder before taking its lock",
    }, error);
  }
  return workflowError(SCOPE, "WRITE_FAILED", `cannot lock ${s.runDir}: ${String(error)}`, {
    file: s.lockDir,
    errno: code,
    hint: "check the run folder's permissions",
  }, error);
}

/**
 * LOCK_LOST: a write (or check) under a lease its own process gave up by closing the store it was taken through.
 * One rule on every store (fs, PostgreSQL, memory): a closed store stops renewing its leases, so nothing more is
 * written under them; refused before any work, whether the lease would still count as live or not.
 */
export function closedLeaseError(scope: string, slug: string, epoch: number): WorkflowError {
  return workflowError(scope, "LOCK_LOST", `run ${slug}: the lease of epoch ${epoch} was given up when its store was closed; nothing more is written under it.`, {
    field: "epoch",
    value: epoch,
    ended: "closed",
    hint: "close a store only after the runs written through it have ended (runWorkflow never closes a store it was given); to write again, open a store and take the run's lock",
  });
}
