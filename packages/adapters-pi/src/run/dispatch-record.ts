/**
 * How a dispatched core transition is kept in the run's history. Each `ctx.workflow.dispatch` is one entry of the
 * same checkpoint history as `ctx.step`, keyed by its occurrence (`phasekit:dispatch#n`) and fingerprinted by the
 * event and the state it was applied to: a replayed body gets the recorded outcome back and the workflow does not
 * move twice. The state the body started from is its own entry (`phasekit:workflow`), so a resumed body sees the
 * run as it was at every point of its replay, not the latest state.
 */
import { migrateState, workflowError, type Refusal, type TransitionOutcome, type WorkflowEvent, type WorkflowState } from "@phasekit/core";
import { z } from "zod";
import type { JsonValue } from "../io/plain-json.js";

import { RESERVED_STEP_PREFIX } from "../engine/reserved-keys.js";
import { schemaIssue } from "../engine/record-issue.js";

export { dispatchKey, RESERVED_STEP_PREFIX } from "../engine/reserved-keys.js";
/** The history key of the core state a body starts from. */
export const WORKFLOW_BASE_KEY = `${RESERVED_STEP_PREFIX}workflow`;

/** Plain JSON of anything core returned (drops `undefined` members, which JSON cannot hold). */
export function toJson(value: unknown): JsonValue {
  return JSON.parse(JSON.stringify(value)) as JsonValue;
}

/** What a dispatch entry's input is: the event and the fingerprinted state it applies to. */
export function dispatchInput(event: WorkflowEvent, from: string): JsonValue {
  return { event: toJson(event), from };
}

const refusalSchema = z.object({ name: z.literal("WorkflowError"), code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()) });
const recordSchema = z.discriminatedUnion("ok", [
  z.object({ ok: z.literal(true), state: z.record(z.string(), z.unknown()), happened: z.object({ type: z.string() }).loose() }),
  z.object({ ok: z.literal(false), error: refusalSchema }),
]);

/** The recorded form of an outcome (the whole state, an armed cancel included: the body saw it). */
export function encodeOutcome(outcome: TransitionOutcome): JsonValue {
  return outcome.ok ? { ok: true, state: toJson(outcome.state), happened: toJson(outcome.happened) } : { ok: false, error: toJson(outcome.error) };
}

/** Reads a recorded outcome back, through core's state schema; a damaged entry is CORRUPT_FILE naming the key. */
export function decodeOutcome(key: string, file: string, raw: unknown): TransitionOutcome {
  const parsed = recordSchema.safeParse(raw);
  if (!parsed.success) throw corrupt(key, file, schemaIssue(parsed.error, raw).text);
  const r = parsed.data;
  if (!r.ok) return { ok: false, error: r.error as Refusal };
  return { ok: true, state: decodeState(key, file, r.state), happened: r.happened as never };
}

/** A recorded state, validated by core; `migrateState` always disarms a cancel, so an armed one is re-armed. */
export function decodeState(key: string, file: string, raw: unknown): WorkflowState {
  const migrated = migrateState(raw);
  if (!migrated.ok) throw corrupt(key, file, migrated.error.message);
  const armed = typeof raw === "object" && raw !== null && (raw as { cancelPending?: unknown }).cancelPending === true;
  return armed ? { ...migrated.state, cancelPending: true } : migrated.state;
}

function corrupt(key: string, file: string, why: string): Error {
  return workflowError("run", "CORRUPT_FILE", `the history entry ${key} in ${file} is not a recorded workflow transition: ${why}.`, {
    file,
    field: key,
    hint: "the run's history was edited or damaged; restore it from a backup, or start a new run",
  });
}
