/**
 * An in-memory CheckpointStore for the memory PlanStore: no durability, and every rule the other stores apply
 * called from its one home (the reuse decision, step keys, error text, commit records, the read-only refusal),
 * never restated here. Every write first asks the store whether it may (`mayWrite`): a reader may not
 * (LOCK_NOT_OWNED) and a displaced lease may not (LOCK_LOST), before any work runs.
 */
import { workflowError } from "@phasekit/core";
import { checkStepKey, commitIntentRecord, type CheckpointStore } from "../engine/checkpoint-port.js";
import type { CommitRecord, StepRecord } from "../engine/records.js";
import { checkCommitRecord } from "../engine/commit-record.js";
import { fingerprint } from "../engine/fingerprint.js";
import { decideStep } from "../engine/reuse-decision.js";
import { stepErrorText } from "../engine/step-error.js";

/** One run's step and commit records, shared by every store object and lease over the same runs. */
export interface MemoryHistory {
  steps: Map<string, { record: StepRecord; output?: unknown }>;
  commits: Map<string, CommitRecord>;
}

/** An empty history. */
export function newMemoryHistory(): MemoryHistory {
  return { steps: new Map(), commits: new Map() };
}

/** The checkpoints of run `slug` over `history`; `mayWrite(what)` throws when this caller may not write. */
export function createMemoryCheckpoints(slug: string, history: MemoryHistory, mayWrite: (what: string) => void): CheckpointStore {
  const { steps, commits } = history;
  const at = "2026-01-01T00:00:00.000Z";
  const file = `memory:${slug}/checkpoints`;
  return {
    file,
    async step(key, input, fn, known) {
      const id = checkStepKey(key);
      const what = `ctx.step("${id}")`;
      mayWrite(what);
      const inputFingerprint = known?.inputFingerprint ?? fingerprint(input);
      const prev = steps.get(id);
      const decision = decideStep(prev?.record, inputFingerprint);
      // A stored output is kept as the value itself, so it cannot fail its check: verify means reuse.
      if (decision.verify) return { reused: true, output: structuredClone(prev?.output) as never, record: prev?.record as StepRecord };
      const reason = decision.reason;
      const started: StepRecord = { v: 1, kind: "step", stepId: id, status: "started", attempt: decision.attempt, inputFingerprint, startedAt: at };
      steps.set(id, { record: started });
      let output: never;
      try {
        output = ((await fn(started.attempt)) ?? null) as never;
      } catch (error) {
        // A holder displaced while the body ran records nothing more; the body's own error is what it sees.
        if (allowed(mayWrite, what)) steps.set(id, { record: { ...started, status: "failed", finishedAt: at, error: stepErrorText(error) } });
        throw error;
      }
      mayWrite(what);
      const record: StepRecord = { ...started, status: "completed", outputFingerprint: fingerprint(output), finishedAt: at };
      steps.set(id, { record, output: structuredClone(output) });
      return { reused: false, reason, output, record };
    },
    async record(id) {
      return steps.get(id)?.record;
    },
    async records() {
      return [...steps.values()].map((s) => s.record);
    },
    async recordCommitIntent(intent) {
      mayWrite(`recording the commit intent "${String(intent?.id)}"`);
      const r = checkCommitRecord(commitIntentRecord(intent, at), file);
      commits.set(r.id, r);
      return r;
    },
    async markCommitted(id, options) {
      mayWrite(`marking the commit "${id}" as made`);
      const prev = commits.get(id);
      if (prev === undefined) throw workflowError("checkpoints", "NOT_FOUND", `no commit intent ${id}`, { value: id });
      const r = checkCommitRecord({ ...prev, status: "committed", committedAt: at, ...(options?.sha ? { sha: options.sha } : {}) }, file);
      commits.set(id, r);
      return r;
    },
    async commits() {
      return [...commits.values()];
    },
    async compact() {
      mayWrite("a compaction");
      return { recordsBefore: steps.size + commits.size, recordsAfter: steps.size + commits.size, artifactsRemoved: 0 };
    },
  };
}

function allowed(mayWrite: (what: string) => void, what: string): boolean {
  try {
    mayWrite(what);
    return true;
  } catch {
    return false;
  }
}
