/**
 * The `CheckpointStore` port over the fenced run log: what `ctx.step` and the body's commit intents use for a
 * run kept on disk. Steps are the log's step records; commit intents are `commit` events (the latest per id
 * wins). Every write is fenced by the log's epoch, so a displaced holder's write is refused with LOCK_LOST.
 */
import path from "node:path";
import { workflowError } from "@phasekit/core";
import type { JsonValue } from "../io/plain-json.js";
import { commitRecordSchema, type CommitRecord, type StepRecord } from "../engine/records.js";
import { checkStepKey, commitIntentRecord, type CheckpointStore, type CommitIntent, type CompactionReport, type KnownInput, type StepOutcome } from "../engine/checkpoint-port.js";
import { checkCommitRecord } from "../engine/commit-record.js";
import { RUN_LOG_DIR } from "./run-log/format.js";
import type { StepEntry } from "./run-log/run-index.js";
import type { RunLog } from "./run-log/run-log.js";
import { pickStepHint } from "../engine/reserved-keys.js";
import { keysFrom, RERUN_EVENT } from "../engine/reuse-decision.js";

const SCOPE = "checkpoints";
/** The event name of commit records in the run log. */
export const COMMIT_EVENT = "commit";

/** A checkpoint store writing to `log`; `now` stamps commit records. */
export function checkpointsOverRunLog(log: RunLog, now: () => Date): CheckpointStore {
  const file = path.join(log.runDir, RUN_LOG_DIR);

  const commitMap = (): Map<string, CommitRecord> => commitsOf(log.events(COMMIT_EVENT));
  const putCommit = async (record: CommitRecord): Promise<CommitRecord> => {
    const checked = checkCommitRecord(record, file);
    await log.event(COMMIT_EVENT, checked as unknown as JsonValue);
    return checked;
  };

  return {
    file,
    async step<T>(id: string, input: unknown, fn: (attempt: number) => T | Promise<T>, known?: KnownInput): Promise<StepOutcome<T>> {
      const key = checkStepKey(id);
      const r = await log.step(key, input, fn as (attempt: number) => JsonValue | Promise<JsonValue>, known);
      const record = toStepRecord(r.entry);
      if (r.reused) return { reused: true, output: r.output as T, record };
      return { reused: false, reason: r.reason, output: r.output as T, record, ...(r.movedAside === undefined ? {} : { movedAside: r.movedAside }) };
    },
    async record(id) {
      const e = log.entry(id);
      return e === undefined ? undefined : toStepRecord(e);
    },
    async records() {
      return log.entries().map(toStepRecord);
    },
    recordCommitIntent: (intent: CommitIntent) => putCommit(commitIntentRecord(intent, now().toISOString())),
    async markCommitted(id, options = {}) {
      const intent = commitMap().get(id);
      if (intent === undefined) {
        throw workflowError(SCOPE, "NOT_FOUND", `no commit intent "${id}" in ${file}.`, { file, field: "id", value: id, hint: "call recordCommitIntent before the commit" });
      }
      const { sha } = options;
      return putCommit({ ...intent, status: "committed", committedAt: now().toISOString(), ...(sha === undefined ? {} : { sha }) });
    },
    async commits() {
      return [...commitMap().values()];
    },
    async compact(): Promise<CompactionReport> {
      const r = await log.compact();
      return { recordsBefore: r.recordsBefore, recordsAfter: r.recordsAfter, artifactsRemoved: r.artifactsRemoved };
    },
    async supersede(from, note) {
      const keys = keysFrom(log.entries().map((e) => e.key), from);
      if (keys === null) {
        throw workflowError(SCOPE, "NOT_FOUND", `the history in ${file} holds no step "${from}".`, { file, field: "from", value: from, hint: pickStepHint(path.basename(log.runDir), log.entries().map((e) => e.key)) });
      }
      await log.event(RERUN_EVENT, { from, keys, at: now().toISOString(), ...(note.reason === undefined ? {} : { reason: note.reason }) });
      return { keys };
    },
  };
}

/** The commit records among the data of `commit` events, the latest per id (malformed ones skipped). */
export function commitsOf(events: readonly JsonValue[]): Map<string, CommitRecord> {
  const out = new Map<string, CommitRecord>();
  for (const data of events) {
    const r = commitRecordSchema.safeParse(data);
    if (r.success) out.set(r.data.id, r.data);
  }
  return out;
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
  } as StepRecord;
}
