/**
 * A run's pinned definitions in its history (durable-runs.ts holds the run): the reserved entry
 * `phasekit:pi-definitions`, keyed by the fingerprints the run's state records, so the entry of the definitions
 * the run goes on with is found by any session that holds the run, and an unchanged pin is never written twice.
 */
import type { WorkflowError } from "@phasekit/core";
import { fingerprint } from "../store/fingerprint.js";
import type { PlanStore } from "../store/plan-store.js";
import { RESERVED_STEP_PREFIX } from "../store/reserved-keys.js";
import type { WorkflowState } from "./core-bridge.js";

/** The history key of a run's pinned definitions (reserved: no step of a body can use it). */
export const PIN_KEY = `${RESERVED_STEP_PREFIX}pi-definitions`;

/** What a pin entry is keyed by: the definition fingerprints the run records (core's `state.definitions`). */
function pinInput(state: WorkflowState): { definitions: Readonly<Record<string, string>> } {
  return { definitions: state.definitions ?? {} };
}

/** Records `data` for `state`'s fingerprints through `store` (which must hold the run's lock). */
export async function savePinIn(store: PlanStore, slug: string, state: WorkflowState, data: unknown, now: number): Promise<{ ok: true } | { ok: false; error: unknown }> {
  if (state.definitions === undefined) return { ok: true };
  try {
    const history = await store.checkpoints(slug, { now: () => new Date(now) });
    // Same fingerprints, same definitions: the entry is reused, not written again.
    await history.step(PIN_KEY, pinInput(state), () => JSON.parse(JSON.stringify(data)) as unknown);
    return { ok: true };
  } catch (error) {
    return { ok: false, error: error as WorkflowError };
  }
}

/** The data recorded for `state`'s fingerprints, or undefined (none, or unreadable: the run then has no pin). */
export async function loadPinFrom(store: PlanStore, slug: string, state: WorkflowState, now: number): Promise<unknown> {
  if (state.definitions === undefined) return undefined;
  try {
    const history = await store.checkpoints(slug, { now: () => new Date(now) });
    const input = pinInput(state);
    const record = await history.record(PIN_KEY);
    // Only the entry of the fingerprints the run records: asking step for any other would write one.
    if (record?.status !== "completed" || record.inputFingerprint !== fingerprint(input)) return undefined;
    const r = await history.step(PIN_KEY, input, () => {
      throw new Error("the recorded pinned definitions could not be read back");
    });
    return r.output;
  } catch {
    return undefined;
  }
}
