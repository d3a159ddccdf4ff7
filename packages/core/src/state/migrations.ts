/**
 * The ordered list of state migrations: `migrations[i]` lifts a version-i document to version i+1. The newest
 * version is `STATE_SCHEMA_VERSION` (= migrations.length); only that one is ever written.
 *
 * - v0: early pi-workflows entries, one flat `currentPhaseIndex` (no sub-workflows), maybe no `globalStepCount`.
 * - v1: pi-workflows 1.0.0 session entries: `active`/`cancelled`, `_cancelPending`, the `currentPath` stack.
 * - v2: phasekit (`schemaVersion: 2`): a `status` lifecycle, `generation`, loop counters, `updatedAt`.
 * - v3: `definitions` holds one 16-digit fingerprint per workflow (v2 added 8 digits per phase: the state grew
 *   with the definitions).
 *
 * Old shapes are read with non-strict zod objects: fields we do not know are dropped, fields we need are checked.
 */
import { z } from "zod";
import type { WorkflowStatus } from "./schema.js";
import { fingerprint } from "../definitions/fingerprint.js";

// Messages start with "expected" so describeIssue uses them as written: `expected a non-negative integer, got "x"`.
const COUNT = { error: "expected a non-negative integer" };
const count = z.number(COUNT).int(COUNT).min(0, COUNT);
const text = z.string({ error: "expected a string" });
const key = z.string({ error: "expected a non-empty string" }).min(1, { error: "expected a non-empty string" });

/** A pi-workflows 1.0.0 path segment. */
const SegmentV1Schema = z.object({ workflowKey: key, phaseIndex: count });

/** Fields shared by v0 and v1 entries. `completionNotified` and `cancelled` were absent in the earliest ones. */
const commonV0V1 = {
  active: z.boolean(),
  workflowKey: key,
  globalStepCount: count.optional(),
  // pi-workflows 1.0.0's own reader accepts entries without a task id (or with ""); one is derived on upgrade.
  taskId: z.string({ error: "expected a string" }).optional(),
  taskDescription: text,
  startedAt: count,
  completionNotified: z.boolean().default(false),
  cancelled: z.boolean().default(false),
  _cancelPending: z.boolean().optional(),
};

/** v0: early pi-workflows entries with one flat phase index. */
export const StateV0Schema = z.object({ ...commonV0V1, currentPhaseIndex: count });
/** v1: pi-workflows 1.0.0 session entries with the `currentPath` stack. */
export const StateV1Schema = z.object({ ...commonV0V1, currentPath: z.array(SegmentV1Schema).min(1) });

export type StateV0 = z.infer<typeof StateV0Schema>;
export type StateV1 = z.infer<typeof StateV1Schema>;

/** One step of the migration list: the schema it reads and the pure function that lifts it one version. */
export interface Migration {
  /** The version this step reads; it produces `from + 1`. */
  readonly from: number;
  /** One line for docs and error messages. */
  readonly summary: string;
  /** Checks the input shape; its issues become INVALID_STATE errors naming the field. */
  readonly schema: z.ZodType;
  /** Lifts an input that passed `schema`. Pure, total, copy-on-write. */
  readonly up: (input: never) => unknown;
}

/** v0 → v1: the flat index becomes a one-segment `currentPath`. */
function v0ToV1(input: StateV0): StateV1 {
  const { currentPhaseIndex, ...rest } = input;
  return { ...rest, currentPath: [{ workflowKey: input.workflowKey, phaseIndex: currentPhaseIndex }] };
}

function statusOf(input: StateV1): WorkflowStatus {
  if (input.active) return "running";
  return input.cancelled ? "cancelled" : "completed";
}

/**
 * v1 → v2: `active`/`cancelled` become a status, `_cancelPending` is dropped (a persisted state is never armed),
 * a missing `globalStepCount` is approximated by the root phase index as pi-workflows did, and the new counters
 * start at zero.
 */
function v1ToV2(input: StateV1): unknown {
  return {
    schemaVersion: 2,
    workflowKey: input.workflowKey,
    status: statusOf(input),
    currentPath: input.currentPath.map((s) => ({ workflowKey: s.workflowKey, phaseIndex: s.phaseIndex, loops: 0 })),
    globalStepCount: input.globalStepCount ?? input.currentPath[0]?.phaseIndex ?? 0,
    loopCount: 0,
    taskId: input.taskId === undefined || input.taskId === "" ? derivedTaskId(input) : input.taskId,
    taskDescription: input.taskDescription,
    startedAt: input.startedAt,
    updatedAt: input.startedAt,
    generation: 0,
    completionNotified: input.completionNotified,
    cancelPending: false,
  };
}

/**
 * A deterministic id for an entry that has none: the same entry always gets the same id, so two readers of one
 * session agree. Derived from what the entry holds (workflow, start time, task text).
 */
export function derivedTaskId(input: Pick<StateV1, "workflowKey" | "startedAt" | "taskDescription">): string {
  return `migrated-${fingerprint([input.workflowKey, input.startedAt, input.taskDescription])}`;
}

const timestamp = z.number().int().min(0);

/**
 * v2: phasekit's first own shape, frozen here as it was written (never derived from the current schema, which
 * moves on): `definitions` values are `<16 hex>/<8 hex per phase, dot-joined>`.
 */
export const StateV2Schema = z.strictObject({
  schemaVersion: z.literal(2),
  workflowKey: z.string().min(1),
  status: z.enum(["running", "paused", "completed", "cancelled", "failed"]),
  failureReason: z.string().optional(),
  currentPath: z.array(z.strictObject({ workflowKey: z.string().min(1), phaseIndex: z.number().int().min(0), loops: z.number().int().min(0).default(0) })).min(1),
  globalStepCount: z.number().int().min(0),
  loopCount: z.number().int().min(0).default(0),
  taskId: z.string().min(1),
  taskDescription: z.string(),
  startedAt: timestamp,
  updatedAt: timestamp,
  finishedAt: timestamp.optional(),
  generation: z.number().int().min(0),
  completionNotified: z.boolean(),
  cancelPending: z.boolean().default(false),
  definitions: z.record(z.string(), z.string()).optional(),
});
export type StateV2 = z.infer<typeof StateV2Schema>;

/**
 * v2 → v3: each recorded fingerprint keeps its workflow hash (the 16 digits before "/"), which is what v3 computes
 * for the same definition, so a run recorded by v2 still reads "unchanged" against the same files.
 */
function v2ToV3(input: StateV2): unknown {
  const { definitions, ...rest } = input;
  if (definitions === undefined) return { ...rest, schemaVersion: 3 };
  const heads: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [key, value] of Object.entries(definitions)) heads[key] = value.slice(0, 16);
  return { ...rest, schemaVersion: 3, definitions: heads };
}

/** Every migration, in order; the index is the version each one reads. */
export const migrations: readonly Migration[] = [
  { from: 0, summary: "pi-workflows flat currentPhaseIndex → currentPath stack", schema: StateV0Schema, up: v0ToV1 },
  { from: 1, summary: "pi-workflows 1.0.0 active/cancelled → phasekit status lifecycle", schema: StateV1Schema, up: v1ToV2 },
  { from: 2, summary: "one fingerprint per workflow instead of one per phase (the state no longer grows with the definitions)", schema: StateV2Schema, up: v2ToV3 },
];

