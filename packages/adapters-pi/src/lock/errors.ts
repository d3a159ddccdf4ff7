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

/** How a lease ended by its own holder's act: its store was closed, or its lock released. */
export type LeaseEnd = "closed" | "released";

const LEASE_ENDS: Record<LeaseEnd, { why: string; hint: string }> = {
  closed: {
    why: "was given up when its store was closed",
    hint: "close a store only after the runs written through it have ended (runWorkflow never closes a store it was given); to write again, open a store and take the run's lock",
  },
  released: {
    why: "was released by its holder",
    hint: "release a lock only after its run's writes have ended; to write again, take the run's lock (store.lock) and write through that lock's store",
  },
};

/**
 * LOCK_LOST: a write (or check) under a lease its own process ended, by closing the store it was taken through
 * (`closedLeaseError`) or by releasing its lock (`releasedLeaseError`). One rule on every store (fs, PostgreSQL,
 * memory): nothing more is written under an ended lease; refused before any work, whether the lease would still
 * count as live or not, with `details.ended` saying how it ended.
 */
function endedLeaseError(scope: string, slug: string, epoch: number, ended: LeaseEnd): WorkflowError {
  const { why, hint } = LEASE_ENDS[ended];
  return workflowError(scope, "LOCK_LOST", `run ${slug}: the lease of epoch ${epoch} ${why}; nothing more is written under it.`, { field: "epoch", value: epoch, ended, hint });
}

/** LOCK_LOST (`details.ended: "closed"`): see `endedLeaseError`. */
export function closedLeaseError(scope: string, slug: string, epoch: number): WorkflowError {
  return endedLeaseError(scope, slug, epoch, "closed");
}

/** LOCK_LOST (`details.ended: "released"`): see `endedLeaseError`. */
export function releasedLeaseError(scope: string, slug: string, epoch: number): WorkflowError {
  return endedLeaseError(scope, slug, epoch, "released");
}
