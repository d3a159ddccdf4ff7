/**
 * Reuse or rerun: the one decision every checkpoint store makes for `step(id, input, fn)`, written once. It is
 * pure: the store reads the stored output only when the decision says `verify`, and reruns with `attempt` and
 * the reason its read gave (artifact-missing / artifact-corrupt) when that output fails its check.
 *
 * Time travel lives here too: a rerun mark (`phasekit rerun --from`) supersedes the records a run held when it
 * was made, for the step it names and every step first recorded after it. Nothing is deleted: a superseded
 * record stays in the history until the step runs again, and the decision alone makes it rerun.
 */
import { z } from "zod";
import { damagedRecord, type RecordPlace } from "./record-issue.js";
import { budgetEntryIndex, isDispatchKey, isReservedStepKey } from "./reserved-keys.js";
import { parseWaitKey } from "./wait-keys.js";

/** Why a step ran instead of being reused. */
export type RerunReason = "no-record" | "started" | "failed" | "input-changed" | "artifact-missing" | "artifact-corrupt" | "superseded";

/** What the decision needs of a step's latest record. */
export interface PriorStep {
  status: "started" | "completed" | "failed";
  inputFingerprint: string;
  attempt: number;
  outputFingerprint?: string | undefined;
  /** A rerun mark written after this record names its step (see `isSuperseded`). */
  superseded?: boolean | undefined;
}

/** Verify and reuse the stored output `outputFingerprint`; or run the step as `attempt` because of `reason`. */
export type StepDecision =
  | { verify: true; outputFingerprint: string; /** The attempt a rerun takes if the stored output fails its check. */ attempt: number }
  | { verify: false; reason: RerunReason; attempt: number };

/**
 * Decides from the step's latest record and this call's input fingerprint. The attempt counts consecutive tries
 * of this input since the step last completed (what maxAttempts limits): a new input or a completion starts
 * again at 1, so earlier successes never count against a retry budget; nor does a superseded record (a person
 * asked for the step to run again, which is a new start).
 */
export function decideStep(previous: PriorStep | undefined, inputFingerprint: string): StepDecision {
  if (previous === undefined) return { verify: false, reason: "no-record", attempt: 1 };
  if (previous.superseded === true) return { verify: false, reason: "superseded", attempt: 1 };
  const sameInput = previous.inputFingerprint === inputFingerprint;
  if (previous.status !== "completed") return { verify: false, reason: previous.status, attempt: sameInput ? previous.attempt + 1 : 1 };
  if (!sameInput) return { verify: false, reason: "input-changed", attempt: 1 };
  if (previous.outputFingerprint === undefined) return { verify: false, reason: "artifact-missing", attempt: 1 };
  return { verify: true, outputFingerprint: previous.outputFingerprint, attempt: 1 };
}

/** The event name of rerun marks in a run's history. */
export const RERUN_EVENT = "rerun";

/** A rerun mark as the history keeps it: written under the lease of `epoch`, superseding `keys`. */
export interface RerunMark {
  /** The lease that wrote the mark: every record of an earlier lease of these keys is superseded by it. */
  epoch: number;
  from: string;
  keys: readonly string[];
}

/**
 * Whether the latest record of `key`, written under the lease `recordEpoch`, is superseded: a mark written by a
 * later lease names it. A lease that writes a mark writes nothing else (rerunFrom), so a record of the step made
 * after the mark always carries a later epoch than the mark's, and is never superseded by it.
 */
export function isSuperseded(key: string, recordEpoch: number, marks: readonly RerunMark[]): boolean {
  for (const m of marks) if (m.epoch > recordEpoch && m.keys.includes(key)) return true;
  return false;
}

/**
 * The keys a rerun from `from` supersedes: `from` and every key recorded after it, in the order the history
 * first recorded them (`ordered`), but phasekit's bookkeeping entries (`rerunsWithSteps`); null when the history
 * holds no `from`. A reserved `from` is refused before this (CheckpointStore.supersede).
 */
export function keysFrom(ordered: readonly string[], from: string): string[] | null {
  const i = ordered.indexOf(from);
  return i < 0 ? null : [from, ...ordered.slice(i + 1).filter(rerunsWithSteps)];
}

/**
 * Whether a key recorded after a rerun's `from` runs again with it. The body's steps do; so do its durable waits
 * (`phasekit:sleep…`, `phasekit:approval…`): the work done again waits again, and a person approves it again,
 * never the work an earlier decision was given for. So do its dispatches: a dispatch made again writes the state
 * it reaches, so the run's state follows the rerun's body; reused (the same event on the same state), it writes
 * nothing, and a body that now dispatches less would leave the run where the first run's later dispatches took it.
 * So do its budget spends, for the same reason: reused (the same spend on the same total), a spend writes nothing,
 * and a body that now spends fewer times would leave the first run's later totals as the run's latest; superseded,
 * they are what readers of the total skip (run/budget.ts latestBudgetEntry), and a spend made again records anew.
 * phasekit's other entries are not named: the workflow's start is the state the replay begins from, and the
 * pinned definitions must never be re-pinned by a rerun (the run would silently take the definitions on disk).
 */
function rerunsWithSteps(key: string): boolean {
  return !isReservedStepKey(key) || parseWaitKey(key) !== null || isDispatchKey(key) || budgetEntryIndex(key) !== undefined;
}

/** A rerun event (a mark, or a spend: rerun-spent.ts) as a backend read it, unchecked: its lease, data and place. */
export interface StoredRerunEvent {
  epoch: number;
  data: unknown;
  file: string;
  place: RecordPlace;
}

// What a mark's reader takes from its data (a writer adds `at` and maybe `reason`, which no decision reads).
const markData = z.object({ from: z.string(), keys: z.array(z.string()) });

/**
 * The rerun marks among RERUN_EVENT events, oldest first. A mark whose data is not one is damage
 * (`damagedRecord`: CORRUPT_FILE naming the file, the place and the field): skipped, it would mark nothing, and
 * the steps a person asked to run again would be reused without a word.
 */
export function rerunMarksOf(events: Iterable<StoredRerunEvent>): RerunMark[] {
  const out: RerunMark[] = [];
  for (const { epoch, data, file, place } of events) {
    const d = markData.safeParse(data);
    if (!d.success) throw damagedRecord("a rerun mark", data, file, place, d.error);
    out.push({ epoch, from: d.data.from, keys: d.data.keys });
  }
  return out;
}
