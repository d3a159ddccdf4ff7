/**
 * One opening of a run's history for everything a request asks of it: its step records, whether each stored
 * output is usable, and an output's text. The inspector's run page asks this of every step; opening the
 * history once per step made a 2,000-step page cost O(steps²).
 */
import { readRunLog, type RunLogView } from "../store/run-log/reader.js";
import type { StepRecord } from "../engine/records.js";
import { checkStoredOutput, readRunSteps, runStepEntries, stepFacts, type StoredOutputCheck } from "../store/run-steps.js";
import { toStepRecord } from "../store/log-checkpoints.js";
import type { StepEntry } from "../store/run-log/run-index.js";
import type { RunLocation } from "../run/target.js";
import type { Roots } from "./run-types.js";
import type { PlanStore } from "../store/plan-store-port.js";
import { storeAt, storeStepOutput, storeStepRecords } from "./store-runs.js";

/** The history of one run, open for the length of one `withHistory` call. */
export interface OpenHistory {
  records: StepRecord[];
  checkOutput(record: StepRecord): Promise<StoredOutputCheck>;
  /** The open run log of a plan folder (absent through a store), for other reads of the same request. */
  log?: RunLogView;
}

/**
 * A run's steps as read, in history order: how many, when each started, and each one's latest record, made when
 * asked. A page of 200 of a 10,000-step run's steps makes 200 records, not 10,000 (that was a third of its time).
 */
export interface StepList {
  readonly count: number;
  /** When step `i` started (ms since the epoch): what the order shown sorts by. */
  startedMs(i: number): number;
  record(i: number): StepRecord;
  /** Every record (`show` and the timeline list them all). */
  all(): StepRecord[];
  /** The step in flight and the one completed last (`stepFacts`, over the records that can be either). */
  facts(): { current: string | null; last: string | null };
}

/** A step list over records already made (an earlier format's log, a store named by URL). */
export function listOfRecords(records: readonly StepRecord[]): StepList {
  const starts = records.map((r) => Date.parse(r.startedAt) || 0);
  return { count: records.length, startedMs: (i) => starts[i] as number, record: (i) => records[i] as StepRecord, all: () => [...records], facts: () => stepFacts(records) };
}

/** A step list over a run log's entries: each record made once, when first asked. */
export function listOfEntries(entries: readonly StepEntry[]): StepList {
  const made: Array<StepRecord | undefined> = [];
  const record = (i: number): StepRecord => (made[i] ??= toStepRecord(entries[i] as StepEntry));
  return {
    count: entries.length,
    // The times toStepRecord makes startedAt and finishedAt from.
    startedMs: (i) => (entries[i] as StepEntry).startedAt ?? (entries[i] as StepEntry).at ?? 0,
    record,
    all: () => entries.map((_, i) => record(i)),
    facts() {
      // Only a started step can be in flight and only the completed one(s) that finished last can be the last
      // completed: stepFacts decides among those, in history order.
      let lastAt = -Infinity;
      for (const e of entries) if (e.status === "completed" && (e.at ?? 0) > lastAt) lastAt = e.at ?? 0;
      const candidates: StepRecord[] = [];
      entries.forEach((e, i) => {
        if (e.status === "started" || (e.status === "completed" && (e.at ?? 0) === lastAt)) candidates.push(record(i));
      });
      return stepFacts(candidates);
    },
  };
}

/** The steps and stored outputs of a history already open (`view`: null for a run of the earlier format). */
export async function stepsIn(runDir: string, view: RunLogView | null): Promise<Omit<OpenHistory, "records"> & { steps: StepList }> {
  const steps = view === null ? listOfRecords(await readRunSteps(runDir, null)) : listOfEntries(runStepEntries(view));
  return { steps, checkOutput: (record) => checkStoredOutput(runDir, record, view), ...(view === null ? {} : { log: view }) };
}

/** The same of run `slug` in a store named by URL (its step records read once). */
export async function storeSteps(store: PlanStore, slug: string): Promise<Omit<OpenHistory, "records"> & { steps: StepList }> {
  const steps = listOfRecords(await storeStepRecords(store, slug));
  return { steps, checkOutput: (record) => storeStepOutput(store, slug, record) };
}

/** Opens the history of `runDir` once, hands it to `fn`, and closes it. */
export async function withHistory<T>(runDir: string, fn: (h: OpenHistory) => Promise<T>): Promise<T> {
  const view = await readRunLog(runDir);
  try {
    return await fn({ records: await readRunSteps(runDir, view), checkOutput: (record) => checkStoredOutput(runDir, record, view), ...(view === null ? {} : { log: view }) });
  } finally {
    view?.close();
  }
}

/** Opens the history of the run at `location` (a plan folder, or the store `roots` names) for `fn`. */
export async function withRunHistory<T>(roots: Roots, location: RunLocation, fn: (h: OpenHistory) => Promise<T>): Promise<T> {
  if (roots.store === undefined) return withHistory(location.runDir, fn);
  const { steps, checkOutput } = await storeSteps(await storeAt(roots.store, roots.repoRoot), location.slug);
  return fn({ records: steps.all(), checkOutput });
}

/** What a step took and gave, as far as the history keeps it. */
export interface StepPayload {
  stepId: string;
  record: StepRecord;
  /** The input itself is not kept, only its fingerprint (the reuse check compares fingerprints). */
  input: { recorded: false; fingerprint: string };
  /** The output as pretty JSON, or why it cannot be shown (none yet, failed, missing or damaged). */
  output: { ok: true; json: string; bytes: number } | { ok: false; reason: string; message: string };
}

/** The payload of step `stepId`, or null when the run has no such step. */
export async function stepPayload(roots: Roots, location: RunLocation, stepId: string): Promise<StepPayload | null> {
  return withRunHistory(roots, location, async (h) => {
    const record = h.records.find((r) => r.stepId === stepId);
    if (record === undefined) return null;
    const input = { recorded: false as const, fingerprint: record.inputFingerprint };
    if (record.status !== "completed") {
      const why = record.status === "failed" ? `attempt ${record.attempt} failed: ${record.error ?? "no message"}` : `attempt ${record.attempt} has not finished`;
      return { stepId, record, input, output: { ok: false, reason: record.status, message: why } };
    }
    const stored = await h.checkOutput(record);
    if (!stored.ok) return { stepId, record, input, output: { ok: false, reason: stored.reason, message: stored.message } };
    const json = `${JSON.stringify(JSON.parse(stored.text), null, 2)}\n`;
    return { stepId, record, input, output: { ok: true, json, bytes: Buffer.byteLength(stored.text) } };
  });
}
