/**
 * The CLI's one window onto runs: every command and the inspector read runs here, through the store and run
 * APIs (target resolution, the store's metadata and journal reads, the lock inspection, the checkpoint log
 * reader), never by parsing files itself, so a change of the on-disk format changes this file at most.
 */
import path from "node:path";
import { isFinished, workflowError } from "@phasekit/core";
import { describeHolder, describeOwner } from "../lock/holder.js";
import { judgeLiveness, type Liveness } from "../lock/liveness.js";
import { readControlRequest } from "../store/control-signals.js";
import { resolveRunTarget, type RunLocation } from "../run/target.js";
import type { StepRecord } from "../engine/records.js";
import { readRunSteps, stepFacts } from "../store/run-steps.js";
import type { JournalEntry } from "../store/journal.js";
import type { RunLogView } from "../store/run-log/reader.js";
import type { WorkflowMetadata } from "../store/metadata-schema.js";
import { createFsPlanStore, type PlanStore } from "../store/plan-store.js";
import type { StoreLeaseView } from "../store/plan-store-port.js";
import { locateStoreRun, storeAt, storeLease, storeRunFacts, storeStepRecords } from "./store-runs.js";

export type { Roots, ShownStatus, RunSummary, StepView, RunDetail } from "./run-types.js";
import type { Roots, ShownStatus, RunSummary, StepView, RunDetail } from "./run-types.js";

/** A store over the plan root of `roots`. */
export function storeOf(roots: Roots): PlanStore {
  return createFsPlanStore(roots);
}

/** Resolves an id, slug or path to an existing run folder; NOT_FOUND / INVALID_SLUG / AMBIGUOUS_TARGET otherwise. */
export async function locateRun(roots: Roots, target: string): Promise<RunLocation> {
  if (roots.store !== undefined) return locateStoreRun(await storeAt(roots.store, roots.repoRoot), target);
  const r = await resolveRunTarget({ ...roots, target });
  if (r.kind === "found") return r.location;
  if (r.kind === "new") {
    throw workflowError("cli", "NOT_FOUND", `no run ${JSON.stringify(target)} (looked for ${r.location.runDir}).`, {
      value: target,
      hint: "`phasekit list` shows the runs; pass --repo or --plan-root when they live elsewhere",
    });
  }
  throw r.error;
}

/**
 * Runs `fn` with the store that holds the run at `location`: the plan folder's (closed after), or the store
 * named by URL (the process's, closed when the command ends).
 */
export async function withRunStore<T>(roots: Roots, location: RunLocation, fn: (store: PlanStore) => Promise<T>): Promise<T> {
  if (roots.store !== undefined) return fn(await storeAt(roots.store, roots.repoRoot));
  const store = createFsPlanStore({ repoRoot: roots.repoRoot, planRoot: location.planRoot });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** Every run under the plan root, newest first. */
export async function listRuns(roots: Roots, nowMs: number): Promise<RunSummary[]> {
  if (roots.store !== undefined) return listStoreRuns(await storeAt(roots.store, roots.repoRoot), nowMs);
  const store = storeOf(roots);
  try {
    const out: RunSummary[] = [];
    for (const entry of await store.list()) {
      const runDir = path.join(store.planRoot, entry.slug);
      const lock = await judgeLiveness(runDir).then(lockOfFolder, () => null);
      const facts = await readRunSteps(runDir).then(stepFacts, () => null);
      out.push(summarize(entry.slug, runDir, entry.ok ? entry.metadata : null, entry.ok ? null : entry.error, lock, nowMs, facts));
    }
    return newestFirst(out);
  } finally {
    await store.close();
  }
}

function newestFirst(runs: RunSummary[]): RunSummary[] {
  return runs.sort((a, b) => (b.updatedAt ?? "").localeCompare(a.updatedAt ?? "") || a.id.localeCompare(b.id));
}

/** `listRuns` on a store named by URL: the same summaries, liveness by the store's lease. */
async function listStoreRuns(store: PlanStore, nowMs: number): Promise<RunSummary[]> {
  const out: RunSummary[] = [];
  for (const f of await storeRunFacts(store)) {
    out.push(summarize(f.slug, await store.runDir(f.slug), f.ok ? f.metadata : null, f.ok ? null : f.error, lockOfLease(f.lease), nowMs, f.steps));
  }
  return newestFirst(out);
}

/** The detail of one run; `opened`: its plan folder's history already open (the caller closes it), read for the steps. */
export async function runDetail(roots: Roots, target: string, nowMs: number, opened?: RunLogView | null): Promise<RunDetail> {
  if (roots.store !== undefined) return storeRunDetail(await storeAt(roots.store, roots.repoRoot), target, nowMs);
  const location = await locateRun(roots, target);
  const store = createFsPlanStore({ repoRoot: roots.repoRoot, planRoot: location.planRoot });
  try {
    const read = await store.readMetadata(location.slug);
    const lock = lockOfFolder(await judgeLiveness(location.runDir));
    const stepsRead = await readRunSteps(location.runDir, opened).then(
      (records) => ({ records, error: null }),
      (error: unknown) => ({ records: [] as StepRecord[], error: readError(error) }),
    );
    const records = stepsRead.records;
    const summary = summarize(location.slug, location.runDir, read.ok ? read.metadata : null, read.ok ? null : read.error, lock, nowMs, stepFacts(records));
    const steps = viewSteps(records, lock.verdict === "live");
    const control = await readControlRequest(location.runDir);
    return { summary, metadata: read.ok ? read.metadata : null, steps, stepsError: stepsRead.error, pending: control.ok ? control.request : null };
  } finally {
    await store.close();
  }
}

/** `runDetail` on a store named by URL. */
async function storeRunDetail(store: PlanStore, target: string, nowMs: number): Promise<RunDetail> {
  const location = await locateStoreRun(store, target);
  const read = await store.readMetadata(location.slug);
  const lock = lockOfLease(await storeLease(store, location.slug));
  const stepsRead = await storeStepRecords(store, location.slug).then(
    (records) => ({ records, error: null }),
    (error: unknown) => ({ records: [] as StepRecord[], error: readError(error) }),
  );
  const summary = summarize(location.slug, location.runDir, read.ok ? read.metadata : null, read.ok ? null : read.error, lock, nowMs, stepFacts(stepsRead.records));
  const control = await store.readControl(location.slug);
  return {
    summary,
    metadata: read.ok ? read.metadata : null,
    steps: viewSteps(stepsRead.records, lock.verdict === "live"),
    stepsError: stepsRead.error,
    pending: control.ok ? control.request : null,
  };
}

/**
 * Whether a follower (`journal --follow`, `watchRun`) waits for more: a running run (its holder alive, or on
 * another host and not settled yet), or a finished or not yet started run whose holder is alive and may still
 * write. A paused, crashed or unreadable run, and a finished one whose lock a dead holder left behind, has
 * nothing more coming.
 */
export function stillGoing(status: ShownStatus, holderLive: boolean): boolean {
  return status === "running" || ((isFinal(status) || status === "new") && holderLive);
}

/** Whether a run's holder is alive: the lock folder's rule, or the store's lease. */
export async function holderLive(roots: Roots, location: RunLocation): Promise<boolean> {
  if (roots.store !== undefined) return (await storeLease(await storeAt(roots.store, roots.repoRoot), location.slug).catch(() => null))?.live === true;
  return (await judgeLiveness(location.runDir).catch(() => null))?.verdict === "live";
}

/** The run's journal; with `after`, only its entries past that seq (what a follower has not seen). */
export async function runJournal(location: RunLocation, roots: Roots, after?: number): Promise<JournalEntry[]> {
  const options = after === undefined ? undefined : { after };
  if (roots.store !== undefined) {
    const r = await (await storeAt(roots.store, roots.repoRoot)).readJournal(location.slug, options);
    if (!r.ok) throw r.error;
    return r.entries;
  }
  const store = createFsPlanStore({ repoRoot: roots.repoRoot, planRoot: location.planRoot });
  try {
    const r = await store.readJournal(location.slug, options);
    if (!r.ok) throw r.error;
    return r.entries;
  } finally {
    await store.close();
  }
}

/** The latest record of every step (the run log, or an earlier format's checkpoint log), read without writing. */
export async function readStepRecords(runDir: string): Promise<StepRecord[]> {
  return readRunSteps(runDir);
}

function viewSteps(records: StepRecord[], live: boolean): StepView[] {
  return [...records]
    .sort((a, b) => a.startedAt.localeCompare(b.startedAt))
    .map((r) => ({
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
    }));
}

function summarize(
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
interface LockSeen {
  verdict: "none" | "live" | "dead";
  /** The holder in one line. */
  holder: string;
  /** Its liveness could not be vouched for (unverified, or a heartbeat watched going quiet; an expired lease). */
  stale: boolean;
}

/** The lock folder's verdict as shown. */
function lockOfFolder(lock: Liveness): LockSeen {
  const gone = lock.verdict === "dead" && lock.by === "pid";
  return { verdict: lock.verdict, holder: `${gone ? "gone: " : ""}${describeHolder(lock.holder)}`, stale: lock.by === "unverified" || (lock.verdict === "dead" && lock.by === "heartbeat") };
}

/** A store's lease as shown: an expired lease nobody took is a dead holder, shown stale (it may still renew). */
function lockOfLease(lease: StoreLeaseView | null): LockSeen {
  if (lease === null) return { verdict: "none", holder: "", stale: false };
  return { verdict: lease.live ? "live" : "dead", holder: `${describeOwner(lease.owner)}, lease until ${lease.until}`, stale: !lease.live };
}

/** A typed read error as shown (a foreign error is INTERNAL: never swallowed silently, always named). */
function readError(error: unknown): { code: string; message: string } {
  const e = error as { code?: unknown; message?: unknown };
  return { code: typeof e.code === "string" ? e.code : "INTERNAL", message: typeof e.message === "string" ? e.message.replace(/^(\[[^\]]*\] )+/, "") : String(error) };
}

/** True when the shown status is final. */
export function isFinal(status: ShownStatus): boolean {
  return status !== "crashed" && status !== "unreadable" && status !== "new" && isFinished({ status });
}
