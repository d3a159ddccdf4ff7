/** `why`: a step's reuse decision explained from its checkpoint record and stored output. */
import type { StepRecord } from "../engine/records.js";
import type { StoredOutputCheck } from "../store/run-steps.js";

/** Whether a step would be reused or run again, and why (the rules of the checkpoint store, read-only). */
export type StepVerdict = { decision: "reuse" | "run" | "reuse-if-same-input" | "in-flight"; reason: string; explanation: string };

/** What a verdict needs besides the record: is the run's holder alive, and is a stored output usable. */
export interface VerdictFacts {
  /** The run's lock holder is alive (a started step is being run now, not abandoned). */
  live: boolean;
  checkOutput(record: StepRecord): Promise<StoredOutputCheck>;
}

/** The verdict for a step's latest record; `given` is the fingerprint of the input it would be called with. */
export async function stepVerdict(record: StepRecord | null, given: string | null, facts: VerdictFacts): Promise<StepVerdict> {
  if (record === null) return { decision: "run", reason: "no-record", explanation: "no checkpoint holds this step: it runs the first time it is called" };
  if (record.superseded === true && record.rerunSpent === true) {
    return { decision: "run", reason: "superseded", explanation: `a rerun (phasekit rerun --from) superseded attempt ${record.attempt}'s record, and the run ended without reaching it: nothing waits for it, but a re-entry that reaches it runs it again` };
  }
  if (record.superseded === true) return { decision: "run", reason: "superseded", explanation: `a rerun (phasekit rerun --from) superseded attempt ${record.attempt}'s record: it runs again the next time the run is resumed` };
  if (record.status === "started" && facts.live) return { decision: "in-flight", reason: "in-flight", explanation: `attempt ${record.attempt} started at ${record.startedAt} and its runner is alive: it is running now` };
  if (record.status === "started") return { decision: "run", reason: "started", explanation: `attempt ${record.attempt} started at ${record.startedAt} and never finished (its runner stopped mid-step): it runs again` };
  if (record.status === "failed") return { decision: "run", reason: "failed", explanation: `attempt ${record.attempt} failed: ${record.error ?? "no message"}; it runs again` };
  const stored = await facts.checkOutput(record);
  if (!stored.ok) return { decision: "run", reason: `artifact-${stored.reason}`, explanation: `its stored output ${record.artifact ?? ""} cannot be used: ${stored.message}` };
  if (given === null) return { decision: "reuse-if-same-input", reason: "completed", explanation: `completed at ${record.finishedAt ?? "?"}; reused when called with input fingerprint ${record.inputFingerprint}, run again on any other input` };
  if (given === record.inputFingerprint) return { decision: "reuse", reason: "same-input", explanation: `completed with the same input fingerprint ${given}` };
  return { decision: "run", reason: "input-changed", explanation: `the input changed: recorded ${record.inputFingerprint}, given ${given}` };
}
