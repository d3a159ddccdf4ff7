/**
 * The CLI's one window onto runs: every command and the inspector read runs here, through the store and run
 * APIs (target resolution, the store's metadata and journal reads, the lock inspection, the checkpoint log
 * reader), never by parsing files itself, so a change of the on-disk format changes this file at most.
 */
import path from "node:path";
import { isFinished, workflowError, type WorkflowStatus } from "@phasekit/core";
import { describeHolder } from "../lock/holder.js";
import { judgeLiveness, type Liveness } from "../lock/liveness.js";
import { readControlRequest, type ControlRequest } from "../store/control-signals.js";
import { resolveRunTarget, type RunLocation } from "../run/target.js";
import type { StepRecord } from "../store/checkpoint-log.js";
import { readRunSteps, stepFacts } from "../store/run-steps.js";
import type { JournalEntry } from "../store/journal.js";
import type { WorkflowMetadata } from "../store/metadata-schema.js";
import { createFsPlanStore, type PlanStore } from "../store/plan-store.js";

/** Where the CLI looks for runs. */
export interface Roots {
  repoRoot: string;
  planRoot?: string;
}

/** A run's status as shown: the stored one, or `crashed` for a `running` run whose lock holder is gone. */
export type ShownStatus = WorkflowStatus | "crashed" | "unreadable" | "new";

/** One row of `list` (and the inspector's table). */
export interface RunSummary {
  id: string;
  runDir: string;
  status: ShownStatus;
  ownerTool: string | null;
  phase: string | null;
  currentStep: string | null;
  lastStep: string | null;
  createdAt: string | null;
  updatedAt: string | null;
  ageMs: number | null;
  /** The lock holder in one line, null when the lock is free. */
  lockHolder: string | null;
  lockStale: boolean;
  /** Why the run could not be read (status `unreadable`). */
  error: { code: string; message: string } | null;
}

/** One step of a run as `show` prints it. */
export interface StepView {
  stepId: string;
  /** `in-flight` while its runner holds the lock; `interrupted` when the runner died mid-step. */
  status: "completed" | "failed" | "in-flight" | "interrupted";
  attempt: number;
  startedAt: string;
  finishedAt: string | null;
  durationMs: number | null;
  inputFingerprint: string;
  outputFingerprint: string | null;
  error: string | null;
}

/** Everything `show` and the inspector need about one run. */
export interface RunDetail {
  summary: RunSummary;
  metadata: WorkflowMetadata | null;
  steps: StepView[];
  /** Why the steps could not be read (a damaged history): the rest of the run is still shown. */
  stepsError: { code: string; message: string } | null;
  pending: ControlRequest | null;
}

/** A store over the plan root of `roots`. */
export function storeOf(roots: Roots): PlanStore {
  return createFsPlanStore(roots);
}

/** Resolves an id, slug or path to an existing run folder; NOT_FOUND / INVALID_SLUG / AMBIGUOUS_TARGET otherwise. */
export async function locateRun(roots: Roots, target: string): Promise<RunLocation> {
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

/** Every run under the plan root, newest first. */
export async function listRuns(roots: Roots, nowMs: number): Promise<RunSummary[]> {
  const store = storeOf(roots);
  try {
    const out: RunSummary[] = [];
    for (const entry of await store.list()) {
      const runDir = path.join(store.planRoot, entry.slug);
      const lock = await judgeLiveness(runDir).catch(() => null);
      const facts = await readRunSteps(runDir).then(stepFacts, () => null);
      out.push(summarize(entry.slug, runDir, entry.ok ? entry.metadata : null, entry.ok ? null : entry.error, lock, nowMs, facts));
    }
    return out.sort((a, b) => (b.updatedAt ?? "").localeCompare(a.updatedAt ?? "") || a.id.localeCompare(b.id));
  } finally {
    await store.close();
  }
}

/** The detail of one run. */
export async function runDetail(roots: Roots, target: string, nowMs: number): Promise<RunDetail> {
  const location = await locateRun(roots, target);
  const store = createFsPlanStore({ repoRoot: roots.repoRoot, planRoot: location.planRoot });
  try {
    const read = await store.readMetadata(location.slug);
    const lock = await judgeLiveness(location.runDir);
    const stepsRead = await readStepRecords(location.runDir).then(
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

/** The run's journal. */
export async function runJournal(location: RunLocation, roots: Roots): Promise<JournalEntry[]> {
  const store = createFsPlanStore({ repoRoot: roots.repoRoot, planRoot: location.planRoot });
  try {
    const r = await store.readJournal(location.slug);
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
    }));
}

function summarize(
  id: string,
  runDir: string,
  m: WorkflowMetadata | null,
  error: { code: string; message: string } | null,
  lock: Liveness | null,
  nowMs: number,
  /** What the run log says of steps (workflow.json's step fields are only as new as its last write). */
  facts: { current: string | null; last: string | null } | null,
): RunSummary {
  const held = lock !== null && lock.verdict !== "none";
  const gone = lock?.verdict === "dead" && lock.by === "pid";
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
    lockHolder: held ? `${gone ? "gone: " : ""}${describeHolder(lock.holder)}` : null,
    lockStale: held && (lock.by === "unverified" || (lock.verdict === "dead" && lock.by === "heartbeat")),
    error: error === null ? null : readError(error),
  };
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
