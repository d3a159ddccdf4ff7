/**
 * An in-memory CheckpointStore for the memory PlanStore: no durability, and every rule the other stores apply
 * called from its one home (the reuse decision, step keys, error text, commit records), never restated here.
 */
import { workflowError } from "@phasekit/core";
import { checkStepKey, commitIntentRecord, type CheckpointStore } from "../../src/store/checkpoint-port.js";
import type { CommitRecord, StepRecord } from "../../src/store/checkpoint-log.js";
import { checkCommitRecord } from "../../src/store/commit-record.js";
import { fingerprint } from "../../src/store/fingerprint.js";
import { decideStep } from "../../src/store/reuse-decision.js";
import { stepErrorText } from "../../src/store/step-error.js";

/** Creates an empty in-memory checkpoint store for the run `slug`. */
export function createMemoryCheckpoints(slug: string): CheckpointStore {
  const steps = new Map<string, { record: StepRecord; output?: unknown }>();
  const commits = new Map<string, CommitRecord>();
  const at = "2026-01-01T00:00:00.000Z";
  const file = `memory:${slug}/checkpoints`;
  return {
    file,
    async step(key, input, fn) {
      const id = checkStepKey(key);
      const inputFingerprint = fingerprint(input);
      const prev = steps.get(id);
      const decision = decideStep(prev?.record, inputFingerprint);
      // A stored output is kept as the value itself, so it cannot fail its check: verify means reuse.
      if (decision.verify) return { reused: true, output: structuredClone(prev?.output) as never, record: prev?.record as StepRecord };
      const reason = decision.reason;
      const started: StepRecord = { v: 1, kind: "step", stepId: id, status: "started", attempt: decision.attempt, inputFingerprint, startedAt: at };
      steps.set(id, { record: started });
      try {
        const output = ((await fn(started.attempt)) ?? null) as never;
        const record: StepRecord = { ...started, status: "completed", outputFingerprint: fingerprint(output), finishedAt: at };
        steps.set(id, { record, output: structuredClone(output) });
        return { reused: false, reason, output, record };
      } catch (error) {
        steps.set(id, { record: { ...started, status: "failed", finishedAt: at, error: stepErrorText(error) } });
        throw error;
      }
    },
    async record(id) {
      return steps.get(id)?.record;
    },
    async records() {
      return [...steps.values()].map((s) => s.record);
    },
    async recordCommitIntent(intent) {
      const r = checkCommitRecord(commitIntentRecord(intent, at), file);
      commits.set(r.id, r);
      return r;
    },
    async markCommitted(id, options) {
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
      return { recordsBefore: steps.size + commits.size, recordsAfter: steps.size + commits.size, artifactsRemoved: 0 };
    },
  };
}
