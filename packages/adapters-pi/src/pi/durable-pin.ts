/**
 * The held run's pinned definitions through its store (durable-runs.ts holds the run): run/definitions-pin.ts is
 * the rule (key, data, reuse); this opens the run's history for it and turns a throw into an outcome.
 */
import type { WorkflowError } from "@phasekit/core";
import { loadPin, savePin, type PinnedData } from "../run/definitions-pin.js";
import type { PlanStore } from "../store/plan-store.js";
import type { WorkflowState } from "./core-bridge.js";

/** Records `data` for `state`'s fingerprints through `store` (which must hold the run's lock). */
export async function savePinIn(store: PlanStore, slug: string, state: WorkflowState, data: PinnedData, now: number): Promise<{ ok: true } | { ok: false; error: unknown }> {
  if (state.definitions === undefined) return { ok: true };
  try {
    await savePin(await store.checkpoints(slug, { now: () => new Date(now) }), state, data);
    return { ok: true };
  } catch (error) {
    return { ok: false, error: error as WorkflowError };
  }
}

/** The data recorded for `state`'s fingerprints, or undefined (none, or unreadable: the run then has no pin). */
export async function loadPinFrom(store: PlanStore, slug: string, state: WorkflowState, now: number): Promise<unknown> {
  if (state.definitions === undefined) return undefined;
  try {
    return await loadPin(await store.checkpoints(slug, { now: () => new Date(now) }), state, (record) => store.readStepOutput?.(slug, record) ?? Promise.resolve(undefined));
  } catch {
    return undefined;
  }
}
