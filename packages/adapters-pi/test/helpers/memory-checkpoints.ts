/** An in-memory CheckpointStore for the memory PlanStore: same reuse rules, no durability. */
import { workflowError } from "@phasekit/core";
import type { CheckpointStore, RerunReason } from "../../src/store/checkpoint-port.js";
import type { CommitRecord, StepRecord } from "../../src/store/checkpoint-log.js";
import { fingerprint } from "../../src/store/fingerprint.js";

/** Creates an empty in-memory checkpoint store for the run `slug`. */
export function createMemoryCheckpoints(slug: string): CheckpointStore {
  const steps = new Map<string, { record: StepRecord; output?: unknown }>();
  const commits = new Map<string, CommitRecord>();
  const at = "2026-01-01T00:00:00.000Z";
  return {
    file: `memory:${slug}/checkpoints`,
    async step(id, input, fn) {
      const inputFingerprint = fingerprint(input);
      const prev = steps.get(id);
      if (prev?.record.status === "completed" && prev.record.inputFingerprint === inputFingerprint) {
        return { reused: true, output: structuredClone(prev.output) as never, record: prev.record };
      }
      const reason: RerunReason = prev === undefined ? "no-record" : prev.record.status === "completed" ? "input-changed" : prev.record.status;
      const started: StepRecord = { v: 1, kind: "step", stepId: id, status: "started", attempt: (prev?.record.attempt ?? 0) + 1, inputFingerprint, startedAt: at };
      steps.set(id, { record: started });
      try {
        const output = ((await fn(started.attempt)) ?? null) as never;
        const record: StepRecord = { ...started, status: "completed", outputFingerprint: fingerprint(output), finishedAt: at };
        steps.set(id, { record, output: structuredClone(output) });
        return { reused: false, reason, output, record };
      } catch (error) {
        steps.set(id, { record: { ...started, status: "failed", finishedAt: at, error: String(error) } });
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
      const r: CommitRecord = { v: 1, kind: "commit", id: intent.id, status: "intended", message: intent.message, files: intent.files, ...(intent.stepId ? { stepId: intent.stepId } : {}), intendedAt: at };
      commits.set(intent.id, r);
      return r;
    },
    async markCommitted(id, options) {
      const prev = commits.get(id);
      if (prev === undefined) throw workflowError("checkpoints", "NOT_FOUND", `no commit intent ${id}`, { value: id });
      const r: CommitRecord = { ...prev, status: "committed", committedAt: at, ...(options?.sha ? { sha: options.sha } : {}) };
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
