/**
 * The memory backend's history port (engine/history-port.ts) for the memory PlanStore: no durability, and no
 * rule of its own: the engine (engine/checkpoints.ts) decides steps, commit records and rerun marks as it does
 * for the fs run log and PostgreSQL. Every write first asks the store whether it may (`mayWrite`): a reader may
 * not (LOCK_NOT_OWNED) and a displaced lease may not (LOCK_LOST), before any work runs.
 */
import type { CheckpointStore } from "../engine/checkpoint-port.js";
import { checkpointsOver } from "../engine/checkpoints.js";
import { fingerprintOfCanonical } from "../engine/fingerprint.js";
import type { HistoryPort } from "../engine/history-port.js";
import type { CommitRecord, StepRecord } from "../engine/records.js";

/** One run's step and commit records, shared by every store object and lease over the same runs. */
export interface MemoryHistory {
  /** The latest record of every step, in the order the run first recorded them, with its output's canonical JSON. */
  steps: Map<string, { record: StepRecord; text?: string }>;
  commits: Map<string, CommitRecord>;
}

/** An empty history. */
export function newMemoryHistory(): MemoryHistory {
  return { steps: new Map(), commits: new Map() };
}

const AT = "2026-01-01T00:00:00.000Z";

/** The checkpoints of run `slug` over `history`; `mayWrite(what)` throws when this caller may not write. */
export function createMemoryCheckpoints(slug: string, history: MemoryHistory, mayWrite: (what: string) => void): CheckpointStore {
  const { steps, commits } = history;
  const port: HistoryPort<StepRecord, StepRecord> = {
    file: `memory:${slug}/checkpoints`,
    run: slug,
    now: () => new Date(AT),
    mayWrite,
    latest: (key) => steps.get(key)?.record,
    async stored(record, outputFingerprint) {
      const text = steps.get(record.stepId)?.text;
      if (text === undefined) return { ok: false, reason: "artifact-missing" };
      return fingerprintOfCanonical(text) === outputFingerprint ? { ok: true, output: JSON.parse(text) } : { ok: false, reason: "artifact-corrupt" };
    },
    async start({ key, attempt, inputFingerprint }) {
      const started: StepRecord = { v: 1, kind: "step", stepId: key, status: "started", attempt, inputFingerprint, startedAt: AT };
      steps.set(key, { record: started });
      return started;
    },
    beforeBody: (started) => mayWrite(`ctx.step("${started.stepId}")`),
    async fail(started, error) {
      // A holder displaced while the body ran records nothing more.
      mayWrite(`ctx.step("${started.stepId}")`);
      steps.set(started.stepId, { record: { ...started, status: "failed", finishedAt: AT, error } });
    },
    async complete(started, { text, fingerprint }) {
      mayWrite(`ctx.step("${started.stepId}")`);
      const record: StepRecord = { ...started, status: "completed", outputFingerprint: fingerprint, finishedAt: AT };
      steps.set(started.stepId, { record, text });
      return record;
    },
    view: (record) => record,
    records: async () => [...steps.values()].map((s) => s.record),
    commits: async () => commits,
    async putCommit(record) {
      commits.set(record.id, record);
      return record;
    },
    async mark({ keys }) {
      for (const key of keys) {
        const s = steps.get(key);
        if (s !== undefined) steps.set(key, { ...s, record: { ...s.record, superseded: true } });
      }
    },
    async compact() {
      const n = steps.size + commits.size;
      return { recordsBefore: n, recordsAfter: n, artifactsRemoved: 0 };
    },
  };
  return checkpointsOver(port);
}
