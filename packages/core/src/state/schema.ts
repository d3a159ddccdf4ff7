/**
 * The persisted workflow state: one versioned schema. Older shapes are lifted by migrate-state.ts; this file
 * describes only the current one.
 */
import { z } from "zod";
import type { DeepReadonly } from "../errors/deep-readonly.js";
import { FINGERPRINT_PATTERN } from "../definitions/fingerprint.js";
import { MAX_NESTING } from "../definitions/registry.js";

/** The version written by this release; `migrateState` refuses anything newer. */
export const STATE_SCHEMA_VERSION = 3 as const;

/** Lifecycle of a run. Replaces pi-workflows' `active`/`cancelled` pair. */
export const WorkflowStatusSchema = z.enum(["running", "paused", "completed", "cancelled", "failed"]);

/** One scope of the `currentPath` stack: which workflow, where in it, and how often this scope looped. */
export const PathSegmentSchema = z.strictObject({
  workflowKey: z.string().min(1),
  phaseIndex: z.number().int().min(0),
  /** Loops of this scope instance; reset when the scope is entered again. Checked against `maxLoops`. */
  loops: z.number().int().min(0).default(0),
});

const timestamp = z.number().int().min(0);

/** The whole state of one run. Times are epoch milliseconds supplied by the caller (core reads no clock). */
export const WorkflowStateSchema = z.strictObject({
  schemaVersion: z.literal(STATE_SCHEMA_VERSION),
  /** Root workflow key (same as `currentPath[0].workflowKey`). */
  workflowKey: z.string().min(1),
  status: WorkflowStatusSchema,
  failureReason: z.string().optional(),
  /** At most MAX_NESTING levels, like every path the walker accepts (checked before parsing: see migrate.ts). */
  currentPath: z.array(PathSegmentSchema).min(1).max(MAX_NESTING),
  /** Counts every advance, loop and sub-workflow entry; never decreases. */
  globalStepCount: z.number().int().min(0),
  /** Loops taken in the whole run. */
  loopCount: z.number().int().min(0).default(0),
  taskId: z.string().min(1),
  taskDescription: z.string(),
  startedAt: timestamp,
  updatedAt: timestamp,
  finishedAt: timestamp.optional(),
  /** Increases on every transition that returns a new state, so a stale copy is recognisable. */
  generation: z.number().int().min(0),
  completionNotified: z.boolean(),
  /**
   * Armed by the first `cancel`; confirmed by a second one; any other transition disarms it. Persisted copies
   * are always disarmed (see `toPersisted`) and every parse disarms (`migrateState`), so a crash never leaves a half-confirmed cancel behind.
   */
  cancelPending: z.boolean().default(false),
  /**
   * Fingerprint of every workflow the run can reach, recorded at start (see `checkDefinitions`): one 16-digit
   * hash per workflow, so the state does not grow with the definitions. Absent on runs started before phasekit
   * recorded it (their verdict is "unknown").
   */
  definitions: z.record(z.string(), z.string().regex(FINGERPRINT_PATTERN, "expected a 16-digit hex fingerprint")).optional(),
});

/** Lifecycle of a run. */
export type WorkflowStatus = z.infer<typeof WorkflowStatusSchema>;
/** One scope of the path (deep-readonly: outcomes share segments with their input). */
export type PathSegment = DeepReadonly<z.infer<typeof PathSegmentSchema>>;
/** The whole state of one run, readonly all the way down (outcomes share structure with their input). */
export type WorkflowState = DeepReadonly<z.infer<typeof WorkflowStateSchema>>;

/**
 * The form to write to disk or a session entry: never with an armed cancel, and without the optional fields
 * that are unset (core keeps them as `undefined` in memory so every state has one object shape).
 */
export function toPersisted(state: WorkflowState): WorkflowState {
  const { failureReason, finishedAt, definitions, ...rest } = state;
  return {
    ...rest,
    cancelPending: false,
    ...(failureReason === undefined ? {} : { failureReason }),
    ...(finishedAt === undefined ? {} : { finishedAt }),
    ...(definitions === undefined ? {} : { definitions }),
  };
}

/** True while the run can still move (running, or paused to resume later). */
export function isLive(state: Pick<WorkflowState, "status">): boolean {
  const status = (state as Partial<Pick<WorkflowState, "status">> | null | undefined)?.status;
  return status === "running" || status === "paused";
}

/** True once the run has ended, whatever the reason (works on anything with a `status`, e.g. workflow.json). */
export function isFinished(state: Pick<WorkflowState, "status">): boolean {
  const status = (state as Partial<Pick<WorkflowState, "status">> | null | undefined)?.status;
  return status === "completed" || status === "cancelled" || status === "failed";
}
