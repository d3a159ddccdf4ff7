/**
 * Reuse or rerun: the one decision every checkpoint store makes for `step(id, input, fn)`, written once. It is
 * pure: the store reads the stored output only when the decision says `verify`, and reruns with `attempt` and
 * the reason its read gave (artifact-missing / artifact-corrupt) when that output fails its check.
 */

/** Why a step ran instead of being reused. */
export type RerunReason = "no-record" | "started" | "failed" | "input-changed" | "artifact-missing" | "artifact-corrupt";

/** What the decision needs of a step's latest record. */
export interface PriorStep {
  status: "started" | "completed" | "failed";
  inputFingerprint: string;
  attempt: number;
  outputFingerprint?: string | undefined;
}

/** Verify and reuse the stored output `outputFingerprint`; or run the step as `attempt` because of `reason`. */
export type StepDecision =
  | { verify: true; outputFingerprint: string; /** The attempt a rerun takes if the stored output fails its check. */ attempt: number }
  | { verify: false; reason: RerunReason; attempt: number };

/**
 * Decides from the step's latest record and this call's input fingerprint. The attempt counts consecutive tries
 * of this input since the step last completed (what maxAttempts limits): a new input or a completion starts
 * again at 1, so earlier successes never count against a retry budget.
 */
export function decideStep(previous: PriorStep | undefined, inputFingerprint: string): StepDecision {
  if (previous === undefined) return { verify: false, reason: "no-record", attempt: 1 };
  const sameInput = previous.inputFingerprint === inputFingerprint;
  if (previous.status !== "completed") return { verify: false, reason: previous.status, attempt: sameInput ? previous.attempt + 1 : 1 };
  if (!sameInput) return { verify: false, reason: "input-changed", attempt: 1 };
  if (previous.outputFingerprint === undefined) return { verify: false, reason: "artifact-missing", attempt: 1 };
  return { verify: true, outputFingerprint: previous.outputFingerprint, attempt: 1 };
}
