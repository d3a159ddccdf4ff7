/**
 * One opening of a run's history for everything a request asks of it: its step records, whether each stored
 * output is usable, and an output's text. The inspector's run page asks this of every step; opening the
 * history once per step made a 2,000-step page cost O(steps²).
 */
import { readRunLog, type RunLogView } from "../store/run-log/reader.js";
import type { StepRecord } from "../engine/records.js";
import { checkStoredOutput, readRunSteps, type StoredOutputCheck } from "../store/run-steps.js";
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

/** The reads of a history already open (`view`: null for a run without a run log, read from its earlier format). */
export async function historyIn(runDir: string, view: RunLogView | null): Promise<OpenHistory> {
  const records = await readRunSteps(runDir, view);
  return { records, checkOutput: (record) => checkStoredOutput(runDir, record, view), ...(view === null ? {} : { log: view }) };
}

/** The same reads of run `slug` in a store named by URL (its step records read once). */
export async function storeHistory(store: PlanStore, slug: string): Promise<OpenHistory> {
  const records = await storeStepRecords(store, slug);
  return { records, checkOutput: (record) => storeStepOutput(store, slug, record) };
}

/** Opens the history of `runDir` once, hands it to `fn`, and closes it. */
export async function withHistory<T>(runDir: string, fn: (h: OpenHistory) => Promise<T>): Promise<T> {
  const view = await readRunLog(runDir);
  try {
    return await fn(await historyIn(runDir, view));
  } finally {
    view?.close();
  }
}

/** Opens the history of the run at `location` (a plan folder, or the store `roots` names) for `fn`. */
export async function withRunHistory<T>(roots: Roots, location: RunLocation, fn: (h: OpenHistory) => Promise<T>): Promise<T> {
  if (roots.store === undefined) return withHistory(location.runDir, fn);
  return fn(await storeHistory(await storeAt(roots.store, roots.repoRoot), location.slug));
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
