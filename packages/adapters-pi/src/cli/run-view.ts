/**
 * The CLI's one window onto runs: every command and the inspector read runs here, through the store and run
 * APIs (target resolution, the store's metadata and journal reads, the lock inspection, the checkpoint log
 * reader), never by parsing files itself, so a change of the on-disk format changes this file at most.
 */
import path from "node:path";
import { workflowError } from "@phasekit/core";
import { judgeLiveness } from "../lock/liveness.js";
import { nodeFs } from "../io/fs-port.js";
import { readControlRequest } from "../store/control-signals.js";
import { resolveRunTarget, type RunLocation } from "../run/target.js";
import type { StepRecord } from "../engine/records.js";
import { checkStoredOutput, readRunSteps, stepFacts } from "../store/run-steps.js";
import { journalAfter, type JournalEntry } from "../store/journal.js";
import { readLegacyJournal, renderJournal } from "../store/journal-view.js";
import { readMetadataWithLog } from "../store/log-metadata.js";
import { readRunLog } from "../store/run-log/reader.js";
import { createFsPlanStore, type PlanStore } from "../store/plan-store.js";
import { METADATA_FILE, type PlanRunEntry } from "../store/plan-store-port.js";
import { settle } from "../store/settle.js";
import { FINISHED_STATUSES } from "../store/run-status.js";
import { listOfRecords, stepsIn, storeSteps, type OpenHistory, type StepList } from "./history-view.js";
import { lockOfFolder, lockOfLease, readError, shownOrder, summarize, viewStep } from "./run-summary.js";
import { locateStoreRun, storeAt, storeLease, storeRunFacts, storeStepOutput } from "./store-runs.js";

export type { Roots, ShownStatus, RunSummary, StepView, RunDetail } from "./run-types.js";
import type { Roots, ShownStatus, RunSummary, RunDetail } from "./run-types.js";

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
    for (const listed of await store.list()) {
      const runDir = path.join(store.planRoot, listed.slug);
      const lock = await judgeLiveness(runDir).then(lockOfFolder, () => null);
      const entry = await settledEntry(store, listed, lock);
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
  for (const listed of await storeRunFacts(store)) {
    const lock = lockOfLease(listed.lease);
    const f = await settledEntry(store, listed, lock);
    out.push(summarize(f.slug, await store.runDir(f.slug), f.ok ? f.metadata : null, f.ok ? null : f.error, lock, nowMs, listed.steps));
  }
  return newestFirst(out);
}

/**
 * A listed run's state as of its holder's check: a list reads every state before it judges each holder, so a
 * `running` state whose holder is gone at the check is read again (the holder may have written `paused` and let
 * go in between; shown as read, it said `crashed`). `withRunRead` judges first instead.
 */
async function settledEntry<E extends PlanRunEntry>(store: PlanStore, entry: E, lock: ReturnType<typeof lockOfLease> | null): Promise<E | PlanRunEntry> {
  if (!entry.ok || entry.metadata?.status !== "running" || lock?.verdict === "live") return entry;
  const again = await store.readMetadata(entry.slug).catch(() => null);
  return again === null ? entry : again.ok ? { slug: entry.slug, ok: true, metadata: again.metadata } : { slug: entry.slug, ok: false, error: again.error };
}

/** The detail of one run. */
export async function runDetail(roots: Roots, target: string, nowMs: number): Promise<RunDetail> {
  return withRunRead(roots, target, nowMs, async (r) => detailOf(r));
}

/** The detail a reading of a run gives (its steps in the order shown). */
export function detailOf({ summary, metadata, stepsError, pending, steps, live }: RunRead): RunDetail {
  return { summary, metadata, steps: shownOrder(steps).map((i) => viewStep(steps.record(i), live)), stepsError, pending };
}

/**
 * What one reading of a run gives a request: its detail's facts, every step's latest record, and the reads of
 * the same opening of its history (stored outputs, the journal). A plan folder's history is opened once per
 * reading: each opening scans it, so a page that opened it once per part paid that scan per part.
 */
export interface RunRead extends Omit<RunDetail, "steps">, Omit<OpenHistory, "records"> {
  location: RunLocation;
  /** The run's steps in history order, each one's record made when asked (none when `stepsError` says why). */
  steps: StepList;
  /** The run's holder is alive (judged before the rest is read): a started step is in flight, more may come. */
  live: boolean;
  /** The run's journal (only its entries past seq `after`, when given), from the same opening. */
  journal(after?: number): Promise<JournalEntry[]>;
}

/**
 * Reads run `target` once for `fn` (a plan folder's history opened once, closed after). A history that cannot be
 * opened leaves its metadata, steps and journal unreadable, each saying why.
 */
export async function withRunRead<T>(roots: Roots, target: string, nowMs: number, fn: (r: RunRead) => Promise<T>): Promise<T> {
  if (roots.store !== undefined) return fn(await storeRunRead(await storeAt(roots.store, roots.repoRoot), target, nowMs));
  const location = await locateRun(roots, target);
  const { runDir } = location;
  // The holder is judged before its state is read: one gone at the check has written all it will, and one alive
  // may write after it (the next look reads that). Judged after, a holder that wrote `paused` and let go between
  // the two reads showed its run `crashed` (a `running` read, no holder), and a follower ended on that word.
  const lock = lockOfFolder(await judgeLiveness(runDir));
  const open = await readRunLog(runDir).then((view) => ({ ok: true as const, view }), (error: unknown) => ({ ok: false as const, error }));
  const view = open.ok ? open.view : null;
  try {
    const read = await settle(async () => {
      if (!open.ok) throw open.error;
      return readMetadataWithLog(path.join(runDir, METADATA_FILE), nodeFs, view?.state());
    });
    const control = await readControlRequest(runDir);
    // Made right where it is awaited: a rejected promise left while other reads go on is an unhandled rejection.
    const steps = open.ok ? stepsIn(runDir, view) : Promise.reject(open.error);
    return await fn(
      await runReadOf(location, nowMs, read, lock, steps, (r) => checkStoredOutput(runDir, r, view), control, async (after) => {
        if (!open.ok) throw open.error;
        const legacy = await readLegacyJournal(runDir, nodeFs);
        if (!legacy.ok) throw legacy.error;
        return renderJournal(legacy.legacy, view, journalAfter({ after }));
      }),
    );
  } finally {
    view?.close();
  }
}

/** `withRunRead` on a store named by URL: each part asked of the store once. */
async function storeRunRead(store: PlanStore, target: string, nowMs: number): Promise<RunRead> {
  const location = await locateStoreRun(store, target);
  const { slug } = location;
  // The lease before the state, as `withRunRead` judges a folder's holder (why there).
  const lock = lockOfLease(await storeLease(store, slug));
  const read = await store.readMetadata(slug);
  const control = await store.readControl(slug);
  return runReadOf(location, nowMs, read, lock, storeSteps(store, slug), (r) => storeStepOutput(store, slug, r), control, async (after) => {
    const r = await store.readJournal(slug, after === undefined ? undefined : { after });
    if (!r.ok) throw r.error;
    return r.entries;
  });
}

/**
 * A RunRead from its parts, whatever the backend: steps that cannot be read leave an empty list and say why
 * (`stepsError`), each stored output still checked by `checkOutput`.
 */
async function runReadOf(
  location: RunLocation,
  nowMs: number,
  read: Awaited<ReturnType<PlanStore["readMetadata"]>>,
  lock: ReturnType<typeof lockOfLease>,
  opening: Promise<Omit<OpenHistory, "records"> & { steps: StepList }>,
  checkOutput: (r: StepRecord) => ReturnType<OpenHistory["checkOutput"]>,
  control: Awaited<ReturnType<PlanStore["readControl"]>>,
  journal: (after?: number) => Promise<JournalEntry[]>,
): Promise<RunRead> {
  const steps = await opening.then(
    (h) => ({ h, error: null }),
    (error: unknown) => ({ h: { steps: listOfRecords([]), checkOutput } as Omit<OpenHistory, "records"> & { steps: StepList }, error: readError(error) }),
  );
  return {
    ...steps.h,
    location,
    summary: summarize(location.slug, location.runDir, read.ok ? read.metadata : null, read.ok ? null : read.error, lock, nowMs, steps.h.steps.facts()),
    metadata: read.ok ? read.metadata : null,
    stepsError: steps.error,
    pending: control.ok ? control.request : null,
    live: lock.verdict === "live",
    journal,
  };
}

/**
 * Whether a follower (`journal --follow`, `watchRun`) waits for more: a running run (its holder alive, or on
 * another host and not settled yet), or any run whose holder is alive and may still write: a finished or paused
 * run's holder journals after the state it wrote (runWorkflow: the paused state, then `paused`, then it lets go)
 * however slowly, and a pi session keeps a run it paused and may resume it. The end waits on that holder letting
 * go, never on a clock. A run no live process holds, paused, crashed, finished or not yet started, has nothing
 * more coming; an unreadable one is `followVerdict`'s.
 */
export function stillGoing(status: ShownStatus, holderLive: boolean): boolean {
  return status === "running" || holderLive;
}

/**
 * What a follower (`journal --follow`, `watchRun`) does after a look, the one rule of both: go on; end, the run
 * having nothing more coming (`stillGoing`); or give up on an unreadable run, only once a second look agrees and
 * no live holder may be mid-write. `unreadableLooks` is the count so far, returned updated.
 */
export function followVerdict(unreadableLooks: number, summary: Pick<RunSummary, "status" | "error">, live: boolean): { unreadableLooks: number; verdict: "go-on" | "ended" | "unreadable" } {
  const looks = summary.error !== null && !live ? unreadableLooks + 1 : 0;
  if (summary.error !== null) return { unreadableLooks: looks, verdict: looks >= 2 ? "unreadable" : "go-on" };
  return { unreadableLooks: looks, verdict: stillGoing(summary.status, live) ? "go-on" : "ended" };
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

/**
 * True when the run is over: the run's own rule (store/run-status.ts), which control requests follow too. A failed
 * run is not: its owner resumes it by running its target again, and a stop filed for it is honoured then.
 */
export function isFinal(status: ShownStatus): boolean {
  return FINISHED_STATUSES.has(status);
}
