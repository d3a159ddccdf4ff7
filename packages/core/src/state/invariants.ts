/**
 * Rules across the fields of a persisted state, checked by `migrateState` after the schema (each field alone is
 * zod's). A state that breaks one would be refused or misread later; here it is refused with the field named.
 */
import { describeValue } from "../errors/problems.js";
import type { WorkflowState } from "./schema.js";

/** One broken rule: the field, why, and the value found. */
export interface Broken {
  readonly field: string;
  readonly reason: string;
  readonly value: unknown;
  readonly hint: string;
}

const REPAIR = "repair or remove the stored state";

/** The first cross-field rule `state` breaks, or undefined. */
export function brokenInvariant(state: WorkflowState): Broken | undefined {
  const root = state.currentPath[0];
  if (root !== undefined && root.workflowKey !== state.workflowKey) {
    return {
      field: "currentPath[0].workflowKey",
      reason: `expected the root workflow ${describeValue(state.workflowKey)}, got ${describeValue(root.workflowKey)}`,
      value: root.workflowKey,
      hint: "the first path segment must be the workflow named by workflowKey",
    };
  }
  if (state.updatedAt < state.startedAt) {
    return { field: "updatedAt", reason: `${state.updatedAt} is before startedAt (${state.startedAt})`, value: state.updatedAt, hint: REPAIR };
  }
  const finished = state.status === "completed" || state.status === "cancelled" || state.status === "failed";
  if (state.finishedAt !== undefined) {
    if (!finished) return { field: "finishedAt", reason: `is set on a ${state.status} run; only a finished run has one`, value: state.finishedAt, hint: REPAIR };
    if (state.finishedAt < state.startedAt || state.finishedAt > state.updatedAt) {
      const reason = `${state.finishedAt} is outside startedAt (${state.startedAt}) … updatedAt (${state.updatedAt})`;
      return { field: "finishedAt", reason, value: state.finishedAt, hint: REPAIR };
    }
  }
  if (state.failureReason !== undefined && state.status !== "failed") {
    return { field: "failureReason", reason: `is set on a ${state.status} run; only a failed run has one`, value: state.failureReason, hint: REPAIR };
  }
  return undefined;
}
