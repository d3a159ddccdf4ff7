/**
 * The fenced run log as the engine's history port (engine/history-port.ts): what `ctx.step` and the body's
 * commit intents use for a run kept on disk. Steps are the log's step records; commit intents are `commit`
 * events (the latest per id wins); rerun marks are `rerun` events, spent marks `rerun-spent` events. Every
 * write is fenced by the log's epoch, so a displaced holder's write is refused with LOCK_LOST. The rules are the
 * engine's (engine/checkpoints.ts).
 */
import path from "node:path";
import type { JsonValue } from "../io/plain-json.js";
import type { StepRecord } from "../engine/records.js";
import { commitsFrom } from "../engine/commit-record.js";
import type { CheckpointStore } from "../engine/checkpoint-port.js";
import { checkpointsOver } from "../engine/checkpoints.js";
import type { HistoryPort } from "../engine/history-port.js";
import { RERUN_EVENT } from "../engine/reuse-decision.js";
import { RERUN_SPENT_EVENT } from "../engine/rerun-spent.js";
import { RUN_LOG_DIR, type StartRecord } from "./run-log/format.js";
import type { StepEntry } from "./run-log/run-index.js";
import type { RunLog } from "./run-log/run-log.js";

/** The event name of commit records in the run log. */
export const COMMIT_EVENT = "commit";

/** A checkpoint store writing to `log`; `now` stamps commit records. */
export function checkpointsOverRunLog(log: RunLog, now: () => Date): CheckpointStore {
  const file = path.join(log.runDir, RUN_LOG_DIR);
  const port: HistoryPort<StepEntry, StartRecord> = {
    ...log.stepPort,
    file,
    run: path.basename(log.runDir),
    now,
    view: toStepRecord,
    records: async () => log.entries().map(toStepRecord),
    commits: async () => commitsFrom(log.placedEvents(COMMIT_EVENT)),
    putCommit: async (record) => (await log.event(COMMIT_EVENT, record as unknown as JsonValue), record),
    mark: ({ from, keys, at, reason }) => log.event(RERUN_EVENT, { from, keys, at, ...(reason === undefined ? {} : { reason }) }),
    spend: ({ keys, at }) => log.event(RERUN_SPENT_EVENT, { keys, at }),
    hasMarks: () => log.hasRerunMarks(),
    async compact() {
      const r = await log.compact();
      return { recordsBefore: r.recordsBefore, recordsAfter: r.recordsAfter, artifactsRemoved: r.artifactsRemoved };
    },
  };
  return checkpointsOver(port);
}

/** The port's record shape of a run-log step entry. */
export function toStepRecord(e: StepEntry): StepRecord {
  const iso = (ms: number | undefined): string => new Date(ms ?? 0).toISOString();
  return {
    v: 1,
    kind: "step",
    stepId: e.key,
    status: e.status,
    attempt: e.attempt,
    inputFingerprint: e.inputFingerprint,
    ...(e.outputFingerprint === undefined ? {} : { outputFingerprint: e.outputFingerprint }),
    ...(e.artifact === undefined ? {} : { artifact: e.artifact }),
    startedAt: iso(e.startedAt ?? e.at),
    ...(e.status === "started" ? {} : { finishedAt: iso(e.at) }),
    ...(e.error === undefined ? {} : { error: e.error }),
    ...(e.superseded === true ? { superseded: true } : {}),
    ...(e.superseded === true && e.rerunSpent === true ? { rerunSpent: true } : {}),
  } as StepRecord;
}
