/**
 * No progress in a `runWorkflow` body: the same step (same id, same input) failing `sameStepFailures` times in a
 * row (the threshold in force when the step is called: the current phase's over its workflow's) pauses the run before its next attempt, with core's reason naming the step (`judgeProgress`). Counted in
 * this invocation: a person who resumes the paused run gives the step fresh tries (maxAttempts still bounds them
 * across resumes). The input is hashed only for ids that have failed, so the usual path costs nothing.
 */
import { isWorkflowError, judgeProgress, workflowError, type ProgressThresholds } from "@phasekit/core";
import { fingerprint } from "../engine/fingerprint.js";

// Errors that end or refuse the run rather than report a failed attempt of the step.
const NOT_A_FAILURE = new Set(["RUN_PAUSED", "RUN_STOPPED", "LOCK_LOST", "MAX_STEPS_REACHED", "MAX_ATTEMPTS_REACHED", "INVALID_OPTIONS"]);

/** Wraps step calls: counts consecutive failures per id and input, and pauses at the threshold. */
export function createStepFailureWatch(thresholds: () => ProgressThresholds | undefined, scope: string): <R>(id: string, input: unknown, call: () => Promise<R>) => Promise<R> {
  const failures = new Map<string, Map<string, number>>();
  return async (id, input, call) => {
    const byInput = failures.get(id);
    const fp = byInput === undefined ? undefined : fingerprint(input);
    const count = fp === undefined ? 0 : (byInput?.get(fp) ?? 0);
    if (count > 0) {
      const j = judgeProgress(thresholds(), { sameStepFailures: { stepId: id, count } });
      if (j.ok && j.verdict.stalled) {
        throw workflowError("run", "RUN_PAUSED", `${scope}: ${j.verdict.reason}: the run is paused.`, {
          reason: j.verdict.reason,
          stepId: id,
          field: "progress.sameStepFailures",
          hint: "fix what makes the step fail, then resume the run (its next attempt runs then)",
        });
      }
    }
    try {
      const result = await call();
      if (fp !== undefined) byInput?.delete(fp);
      return result;
    } catch (error) {
      if (!(isWorkflowError(error) && NOT_A_FAILURE.has(error.code))) {
        let m = failures.get(id);
        if (m === undefined) failures.set(id, (m = new Map()));
        const key = fp ?? fingerprint(input);
        m.set(key, (m.get(key) ?? 0) + 1);
      }
      throw error;
    }
  };
}
