/**
 * How the CLI and the inspector sum a run up for people: its shown status (a `running` run whose holder is gone
 * is `crashed`), its lock in one line, and its steps as shown, in the order shown. run-view.ts reads the facts;
 * this file only decides how they look.
 */
import type { WorkflowMetadata } from "../store/metadata-schema.js";
import type { StoreLeaseView } from "../store/plan-store-port.js";
import type { StepRecord } from "../engine/records.js";
import { describeHolder, describeOwner } from "../lock/holder.js";
import type { Liveness } from "../lock/liveness.js";
import type { RunSummary, ShownStatus, StepView } from "./run-types.js";
import type { StepList } from "./history-view.js";

/** A run's summary from its metadata (or why it cannot be read), its lock and what its history says of steps. */
export function summarize(
  id: string,
  runDir: string,
  m: WorkflowMetadata | null,
  error: { code: string; message: string } | null,
  lock: LockSeen | null,
  nowMs: number,
  /** What the run log says of steps (workflow.json's step fields are only as new as its last write). */
  facts: { current: string | null; last: string | null } | null,
): RunSummary {
  const held = lock !== null && lock.verdict !== "none";
  let status: ShownStatus = error !== null ? "unreadable" : m === null ? "new" : m.status;
  // A run that says `running` but whose runner is not alive by the lock's liveness rule has crashed: it resumes
  // when asked. A holder on another host whose heartbeat looks stale stays `running` (lock "stale: …") until a
  // watch settles it: one look cannot tell a dead holder from a skewed clock.
  if (m !== null && m.status === "running" && lock?.verdict !== "live") status = "crashed";
  return {
    id,
    runDir,
    status,
    ownerTool: m?.ownerTool ?? null,
    phase: m?.phase ?? null,
    currentStep: status === "running" || status === "crashed" ? (facts?.current ?? m?.currentStepId ?? null) : (m?.currentStepId ?? null),
    lastStep: facts?.last ?? m?.lastCompletedStepId ?? null,
    createdAt: m?.createdAt ?? null,
    updatedAt: m?.updatedAt ?? null,
    ageMs: m === null ? null : Math.max(0, nowMs - Date.parse(m.updatedAt)),
    lockHolder: held ? lock.holder : null,
    lockStale: held && lock.stale,
    error: error === null ? null : readError(error),
  };
}

/** A lock as a summary shows it, whichever rule judged it. */
export interface LockSeen {
  verdict: "none" | "live" | "dead";
  /** The holder in one line. */
  holder: string;
  /** Its liveness could not be vouched for (unverified, or a heartbeat watched going quiet; an expired lease). */
  stale: boolean;
}

/** The lock folder's verdict as shown. */
export function lockOfFolder(lock: Liveness): LockSeen {
  const gone = lock.verdict === "dead" && lock.by === "pid";
  return { verdict: lock.verdict, holder: `${gone ? "gone: " : ""}${describeHolder(lock.holder)}`, stale: lock.by === "unverified" || (lock.verdict === "dead" && lock.by === "heartbeat") };
}

/** A store's lease as shown: an expired lease nobody took is a dead holder, shown stale (it may still renew). */
export function lockOfLease(lease: StoreLeaseView | null): LockSeen {
  if (lease === null) return { verdict: "none", holder: "", stale: false };
  return { verdict: lease.live ? "live" : "dead", holder: `${describeOwner(lease.owner)}, lease until ${lease.until}`, stale: !lease.live };
}

/** A typed read error as shown (a foreign error is INTERNAL: never swallowed silently, always named). */
export function readError(error: unknown): { code: string; message: string } {
  const e = error as { code?: unknown; message?: unknown };
  return { code: typeof e.code === "string" ? e.code : "INTERNAL", message: typeof e.message === "string" ? e.message.replace(/^(\[[^\]]*\] )+/, "") : String(error) };
}

/**
 * The positions of a run's steps (in history order: the order the run first recorded them) in the order steps
 * are shown: by start time, a tie in history order. Positions, so a page can name where it stands (a cursor).
 */
export function shownOrder(steps: StepList): number[] {
  const at = Array.from({ length: steps.count }, (_, i) => steps.startedMs(i));
  return at.map((_, i) => i).sort((a, b) => (at[a] as number) - (at[b] as number) || a - b);
}

/** A step's latest record as shown (`live`: its run's holder is alive, so a started step is in flight). */
export function viewStep(r: StepRecord, live: boolean): StepView {
  return {
    stepId: r.stepId,
    status: r.status === "started" ? (live ? "in-flight" : "interrupted") : r.status,
    attempt: r.attempt,
    startedAt: r.startedAt,
    finishedAt: r.finishedAt ?? null,
    durationMs: r.finishedAt === undefined ? null : Date.parse(r.finishedAt) - Date.parse(r.startedAt),
    inputFingerprint: r.inputFingerprint,
    outputFingerprint: r.outputFingerprint ?? null,
    error: r.error ?? null,
    superseded: r.superseded === true,
    rerunSpent: r.superseded === true && r.rerunSpent === true,
  };
}
