/**
 * A run's steps as readers see them (the CLI, the inspector page, tests), without claiming or repairing
 * anything: from the run log when the run has one, else from a checkpoint log of the earlier format (a run not
 * opened by this version yet).
 */
import path from "node:path";
import { nodeFs } from "../io/fs-port.js";
import { readArtifact } from "./run-log/run-artifacts.js";
import { RUN_ARTIFACTS_DIR } from "./run-log/file-names.js";
import { fingerprintDigest } from "../engine/fingerprint.js";
import { type StepRecord } from "../engine/records.js";
import { CHECKPOINT_LOG_FILE, readLog } from "./checkpoint-log.js";
import { toStepRecord } from "./log-checkpoints.js";
import { readRunLog, type RunLogView } from "./run-log/reader.js";
import type { StepEntry } from "./run-log/run-index.js";
import { isReservedStepKey } from "../engine/reserved-keys.js";

/**
 * The latest record of every step of the run in `runDir` (the body's steps: not phasekit's own entries), as
 * people are shown them. `opened`: a view the caller already holds (and closes), so a reader asking many things
 * opens the history once.
 */
export async function readRunSteps(runDir: string, opened?: RunLogView | null): Promise<StepRecord[]> {
  return readRecords(runDir, opened, runStepEntries);
}

/**
 * The latest record of every entry of the run's history, phasekit's own included (its workflow's start, each
 * dispatch, budget spend and wait, the definitions pin), as the run's holder reads them: what the fs store's
 * read-only checkpoints give, as PostgreSQL's and the memory store's do, so a fork or a budget reader that holds
 * no lease reads the same history. `opened` as in readRunSteps.
 */
export async function readRunHistory(runDir: string, opened?: RunLogView | null): Promise<StepRecord[]> {
  return readRecords(runDir, opened, (view) => view.entries());
}

async function readRecords(runDir: string, opened: RunLogView | null | undefined, pick: (view: RunLogView) => StepEntry[]): Promise<StepRecord[]> {
  const view = opened !== undefined ? opened : await readRunLog(runDir);
  if (view !== null) {
    try {
      return pick(view).map(toStepRecord);
    } finally {
      if (opened === undefined) view.close();
    }
  }
  const r = await readLog(nodeFs, path.join(runDir, CHECKPOINT_LOG_FILE));
  if (!r.ok) throw r.error;
  return [...r.log.steps.values()];
}

/**
 * The body's steps of an open run log as its index holds them, in history order, no StepRecord made: a reader
 * that shows a page of a long run's steps makes records for that page only (`toStepRecord`).
 */
export function runStepEntries(view: RunLogView): StepEntry[] {
  return view.entries().filter((e) => !isReservedStepKey(e.key));
}

/** Whether the stored output of a completed step can be used: present and matching its fingerprint. */
export type StoredOutputCheck = { ok: true; text: string } | { ok: false; reason: "missing" | "corrupt"; message: string };

/** Reads and verifies the stored output of step `stepId` (its latest completed record); `opened` as in readRunSteps. */
export async function checkStoredOutput(runDir: string, record: StepRecord, opened?: RunLogView | null): Promise<StoredOutputCheck> {
  const view = opened !== undefined ? opened : await readRunLog(runDir);
  if (view !== null) {
    try {
      const entry = view.entry(record.stepId);
      if (entry === undefined || entry.status !== "completed") return { ok: false, reason: "missing", message: `the run log holds no completed record of ${record.stepId}` };
      const text = await view.outputText(entry);
      if (text !== undefined) return { ok: true, text };
      const where = entry.artifact ?? `the run log (${path.basename(entry.output?.file ?? "?")})`;
      return { ok: false, reason: "corrupt", message: `its stored output in ${where} is missing or does not match ${entry.outputFingerprint ?? "?"}` };
    } finally {
      if (opened === undefined) view.close();
    }
  }
  if (record.outputFingerprint === undefined) return { ok: false, reason: "missing", message: "the record names no output" };
  // A run of the earlier format: its outputs are `artifacts/<sha256>.json`, read by the run log's one reader.
  const art = await readArtifact(runDir, `${RUN_ARTIFACTS_DIR}/${fingerprintDigest(record.outputFingerprint)}.json`, record.outputFingerprint);
  return art.ok ? { ok: true, text: art.text } : { ok: false, reason: art.reason, message: art.detail };
}

/** The step in flight (the latest started, not finished) and the one completed last, by record time. */
export function stepFacts(records: readonly StepRecord[]): { current: string | null; last: string | null } {
  let current: StepRecord | undefined;
  let last: StepRecord | undefined;
  // Ties go to the later record: steps that end within one millisecond share a time stamp, and the history's
  // order is then the only one left (the first of them won before, so `phasekit list` could name a step that
  // completed before the last one).
  for (const r of records) {
    if (r.status === "started" && (current === undefined || r.startedAt >= current.startedAt)) current = r;
    if (r.status === "completed" && (last === undefined || (r.finishedAt ?? "") >= (last.finishedAt ?? ""))) last = r;
  }
  return { current: current?.stepId ?? null, last: last?.stepId ?? null };
}
