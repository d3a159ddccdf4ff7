/**
 * A run's pinned definitions: the compiled definitions of every workflow a run reaches, recorded in the run's
 * history as the reserved entry `phasekit:pi-definitions`, keyed by the fingerprints the run's state records
 * (core's `state.definitions`). One home for the rule, used by `runWorkflow`, the pi extension and `phasekit
 * show`: the entry of the definitions a run goes on with is found by whoever opens the run, and an unchanged pin
 * is never written twice (same fingerprints, same entry: the history reuses it).
 */
import { compileDefinitions, isBlocking, workflowError, type WorkflowError, type WorkflowRegistry, type WorkflowState } from "@phasekit/core";
import type { CheckpointStore } from "../engine/checkpoint-port.js";
import type { StepRecord } from "../engine/records.js";
import type { StoredOutputCheck } from "../store/run-steps.js";
import { fingerprint } from "../engine/fingerprint.js";
import { RESERVED_STEP_PREFIX } from "../engine/reserved-keys.js";
import { readRunLog } from "../store/run-log/reader.js";

/** The history key of a run's pinned definitions (reserved: no step of a body can use it). Its name predates runWorkflow's use: runs record it. */
export const PIN_KEY = `${RESERVED_STEP_PREFIX}pi-definitions`;

/** What a pin holds: the compiled definitions of every workflow the run reaches, by key. */
export interface PinnedData {
  readonly taskId: string;
  readonly workflows: Readonly<Record<string, unknown>>;
}

/** The pin data of `registry`'s workflows that `state` reaches (the keys core fingerprinted). */
export function pinData(state: WorkflowState, registry: WorkflowRegistry): PinnedData {
  const keys = Object.keys(state.definitions ?? { [state.workflowKey]: "" });
  const workflows: Record<string, unknown> = {};
  for (const k of keys) {
    const def = registry.workflows.get(k);
    if (def !== undefined) workflows[k] = def;
  }
  return { taskId: state.taskId, workflows };
}

const compiled = new WeakMap<object, WorkflowRegistry | null>();

/**
 * Pin data of run `taskId` (a session entry's, or the history's) compiled once per object; undefined when it is
 * not pin data of that run or does not compile. Warnings (a field pi ignores, a shared command name) do not void a
 * pin; errors do.
 */
export function pinnedRegistry(data: unknown, taskId: string): WorkflowRegistry | undefined {
  const d = data as Partial<PinnedData> | null | undefined;
  if (typeof d !== "object" || d === null || d.taskId !== taskId || typeof d.workflows !== "object" || d.workflows === null) return undefined;
  let reg = compiled.get(d);
  if (reg === undefined) {
    const c = compileDefinitions(d.workflows as Record<string, unknown>, { keepHealthy: true });
    reg = !c.ok || c.problems.some(isBlocking) ? null : c.registry;
    compiled.set(d, reg);
  }
  return reg ?? undefined;
}

/** What a pin entry is keyed by: the definition fingerprints the run records. */
function pinInput(state: WorkflowState): { definitions: Readonly<Record<string, string>> } {
  return { definitions: state.definitions ?? {} };
}

/**
 * Whether a history record (its key, status and input fingerprint) is the completed pin of `state`'s fingerprints:
 * what a reader checks before reading the record's output (another set's pin is not this run's).
 */
export function isPinOf(record: { readonly key: string; readonly status: string; readonly inputFingerprint: string }, state: WorkflowState): boolean {
  return state.definitions !== undefined && record.key === PIN_KEY && record.status === "completed" && record.inputFingerprint === fingerprint(pinInput(state));
}

/** Records `data` for `state`'s fingerprints in `history` (its writer must hold the run's lock); throws what the history throws. */
export async function savePin(history: CheckpointStore, state: WorkflowState, data: PinnedData): Promise<void> {
  if (state.definitions === undefined) return;
  // Same fingerprints, same definitions: the entry is reused, not written again.
  await history.step(PIN_KEY, pinInput(state), () => JSON.parse(JSON.stringify(data)) as unknown);
}

/** Reads a completed record's stored output without writing anything (a store's `readStepOutput`). */
export type PinOutputReader = (record: StepRecord) => Promise<StoredOutputCheck | undefined>;

/**
 * The data recorded for `state`'s fingerprints, or undefined (none, or another set's: the run then has no pin).
 * A stored output that cannot be read back is CORRUPT_FILE naming the history's file; with `readOutput` the pin's
 * record is left as it was (without it, the history's step is the only reader and records the failed attempt).
 */
export async function loadPin(history: CheckpointStore, state: WorkflowState, readOutput?: PinOutputReader): Promise<unknown> {
  if (state.definitions === undefined) return undefined;
  const record = await history.record(PIN_KEY);
  // Only the entry of the fingerprints the run records: asking step for any other would write one. Nor a pin a
  // rerun mark superseded: step would run it again, overwriting the pin's record with a failed attempt.
  if (record === undefined || record.superseded === true || !isPinOf({ ...record, key: record.stepId }, state)) return undefined;
  const read = await readOutput?.(record);
  if (read !== undefined) {
    if (!read.ok) throw damagedPin(history.file, read.message);
    try {
      return JSON.parse(read.text) as unknown;
    } catch (error) {
      throw damagedPin(history.file, `it is not JSON (${(error as Error).message})`);
    }
  }
  const r = await history.step(PIN_KEY, pinInput(state), () => {
    throw damagedPin(history.file, "its stored output could not be read back");
  });
  return r.output;
}

function damagedPin(file: string, why: string): WorkflowError {
  return workflowError("definitions", "CORRUPT_FILE", `the run's pinned definitions (${PIN_KEY}) in ${file} are damaged: ${why}.`, {
    file,
    value: PIN_KEY,
    hint: "restore the run folder from a backup, or resume with the current definitions by starting a new run",
  });
}

/**
 * The pin of `state`'s fingerprints in the run folder `runDir`, read without a lock (the CLI's view); undefined
 * when the run has none or it cannot be read. Throws nothing: a reader shows what it can.
 */
export async function readPinIn(runDir: string, state: WorkflowState): Promise<unknown> {
  if (state.definitions === undefined) return undefined;
  const view = await readRunLog(runDir).catch(() => null);
  if (view === null) return undefined;
  try {
    const entry = view.entry(PIN_KEY);
    if (entry === undefined || !isPinOf(entry, state)) return undefined;
    const text = await view.outputText(entry);
    return text === undefined ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined;
  } finally {
    view.close();
  }
}
