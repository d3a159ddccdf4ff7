/**
 * The one home of argument checks for every exported core function: a registry made by compileDefinitions, a
 * clock reading, and an in-memory state of the right shape. A JavaScript caller can pass anything; a wrong
 * argument is an INVALID_OPTIONS (INVALID_REGISTRY for the registry) refusal naming it, never a TypeError, and
 * never a silent pass (a `NaN` loop count compares false with `maxLoops` and would loop forever).
 *
 * The state check is a shape check only (types and bounds, one pass over the path, no allocation): it runs on
 * every move. Cross-field rules of a persisted state are `migrateState`'s (state/invariants.ts).
 */
import { isCompiledRegistry, MAX_NESTING } from "../definitions/registry.js";
import { describeValue } from "../errors/problems.js";
import { refusal, type Refusal } from "../errors/refusal.js";
import { STATE_SCHEMA_VERSION, type WorkflowState } from "../state/schema.js";
import type { CommonCode, TransitionContext } from "./types.js";

const STATE_HINT = "Pass a state from migrateState or from a core transition, unchanged.";

/** INVALID_REGISTRY unless `registry` was made by compileDefinitions. */
export function registryError(scope: string, registry: unknown): Refusal<"INVALID_REGISTRY"> | undefined {
  if (isCompiledRegistry(registry)) return undefined;
  return refusal(scope, "INVALID_REGISTRY", `the registry argument is not a registry made by compileDefinitions (got ${kindOf(registry)}).`, {
    field: "registry",
    hint: "Call core functions as f(registry, state, …) with the registry from compileDefinitions.",
  });
}

/** INVALID_OPTIONS unless `ctx.now` is epoch milliseconds. */
export function clockError(scope: string, ctx: unknown): Refusal<"INVALID_OPTIONS"> | undefined {
  const now = typeof ctx === "object" && ctx !== null ? (ctx as Partial<TransitionContext>).now : undefined;
  if (typeof now === "number" && Number.isSafeInteger(now) && now >= 0) return undefined;
  return refusal(scope, "INVALID_OPTIONS", `ctx.now must be epoch milliseconds (a non-negative integer), got ${describeValue(now)}.`, {
    field: "ctx.now",
    value: typeof now === "number" ? now : undefined,
    hint: "Pass { now: Date.now() } from the adapter.",
  });
}

/** The registry and clock checks every move shares. */
export function argumentError(scope: string, registry: unknown, ctx: unknown): Refusal<CommonCode> | undefined {
  return registryError(scope, registry) ?? clockError(scope, ctx);
}

/** INVALID_OPTIONS naming `field` of a bad argument. */
export function optionError(scope: string, field: string, reason: string, value: unknown, hint: string): Refusal<"INVALID_OPTIONS"> {
  return refusal(scope, "INVALID_OPTIONS", `${field} ${reason}, got ${describeValue(value)}.`, { field, value: isPrimitive(value) ? value : undefined, hint });
}

const isStatus = (v: unknown): boolean => v === "running" || v === "paused" || v === "completed" || v === "cancelled" || v === "failed";

const count = (v: unknown): boolean => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

/** INVALID_OPTIONS unless `state` has the shape of a current WorkflowState (types and bounds). */
export function stateError(scope: string, state: unknown): Refusal<"INVALID_OPTIONS"> | undefined {
  if (typeof state !== "object" || state === null || Array.isArray(state)) return optionError(scope, "state", "must be a workflow state object", state, STATE_HINT);
  const s = state as Partial<Record<keyof WorkflowState, unknown>>;
  // Plain property reads, no loop over field names: this runs on every move and every tool call.
  const field =
    s.schemaVersion !== STATE_SCHEMA_VERSION ? "schemaVersion"
    : typeof s.workflowKey !== "string" || s.workflowKey === "" ? "workflowKey"
    : !isStatus(s.status) ? "status"
    : !count(s.globalStepCount) ? "globalStepCount"
    : !count(s.loopCount) ? "loopCount"
    : !count(s.generation) ? "generation"
    : !count(s.startedAt) ? "startedAt"
    : !count(s.updatedAt) ? "updatedAt"
    : s.finishedAt !== undefined && !count(s.finishedAt) ? "finishedAt"
    : typeof s.taskId !== "string" || s.taskId === "" ? "taskId"
    : typeof s.taskDescription !== "string" ? "taskDescription"
    : s.failureReason !== undefined && typeof s.failureReason !== "string" ? "failureReason"
    : typeof s.completionNotified !== "boolean" ? "completionNotified"
    : typeof s.cancelPending !== "boolean" ? "cancelPending"
    : s.definitions !== undefined && (typeof s.definitions !== "object" || s.definitions === null || Array.isArray(s.definitions)) ? "definitions"
    : undefined;
  if (field !== undefined) return optionError(scope, `state.${field}`, EXPECTED[field] ?? "is wrong", s[field], STATE_HINT);
  return pathError(scope, s.currentPath);
}

const EXPECTED: Readonly<Record<string, string>> = {
  schemaVersion: `must be ${STATE_SCHEMA_VERSION} (read older states with migrateState)`,
  workflowKey: "must be a non-empty string",
  status: "must be running, paused, completed, cancelled or failed",
  globalStepCount: "must be a non-negative integer",
  loopCount: "must be a non-negative integer",
  generation: "must be a non-negative integer",
  startedAt: "must be a non-negative integer",
  updatedAt: "must be a non-negative integer",
  finishedAt: "must be a non-negative integer or absent",
  taskId: "must be a non-empty string",
  taskDescription: "must be a string",
  failureReason: "must be a string or absent",
  completionNotified: "must be a boolean",
  cancelPending: "must be a boolean",
  definitions: "must be an object of fingerprints by workflow key, or absent",
};

function pathError(scope: string, path: unknown): Refusal<"INVALID_OPTIONS"> | undefined {
  // Length is the walker's rule (INVALID_STATE for an empty path, NESTING_TOO_DEEP past the limit): only types here.
  if (!Array.isArray(path)) return optionError(scope, "state.currentPath", "must be an array of path segments", path, STATE_HINT);
  for (let d = 0; d < Math.min(path.length, MAX_NESTING + 1); d++) {
    const seg: unknown = path[d];
    const where = `state.currentPath[${d}]`;
    if (typeof seg !== "object" || seg === null) return optionError(scope, where, "must be a path segment object", seg, STATE_HINT);
    const { workflowKey, phaseIndex, loops } = seg as Record<string, unknown>;
    if (typeof workflowKey !== "string" || workflowKey === "") return optionError(scope, `${where}.workflowKey`, "must be a non-empty string", workflowKey, STATE_HINT);
    if (!count(phaseIndex)) return optionError(scope, `${where}.phaseIndex`, "must be a non-negative integer", phaseIndex, STATE_HINT);
    if (!count(loops)) return optionError(scope, `${where}.loops`, "must be a non-negative integer", loops, STATE_HINT);
  }
  return undefined;
}

/** The state check for functions that also accept `null` for "no run". */
export function stateOrNullError(scope: string, state: unknown): Refusal<"INVALID_OPTIONS"> | undefined {
  return state === null ? undefined : stateError(scope, state);
}

const actives = new WeakSet<object>();

/** Records an ActiveWorkflow made by resolveActive (the texts accept no other: see activeError). */
export function markActive<T extends object>(active: T): T {
  actives.add(active);
  return active;
}

/** INVALID_OPTIONS unless `active` is an ActiveWorkflow made by resolveActive (of this copy of core). */
export function activeError(scope: string, active: unknown): Refusal<"INVALID_OPTIONS"> | undefined {
  if (typeof active === "object" && active !== null && actives.has(active)) return undefined;
  return optionError(scope, "active", "must be the active workflow from resolveActive", active, "Pass resolveActive(registry, state).active (not null), unchanged.");
}

/** INVALID_OPTIONS unless `value` is a string. */
export function stringError(scope: string, field: string, value: unknown, hint: string): Refusal<"INVALID_OPTIONS"> | undefined {
  return typeof value === "string" ? undefined : optionError(scope, field, "must be a string", value, hint);
}

/** INVALID_OPTIONS unless `value` is null or a PhaseRef (its name and emoji are what texts read). */
export function phaseRefError(scope: string, field: string, value: unknown, hint: string): Refusal<"INVALID_OPTIONS"> | undefined {
  if (value === null) return undefined;
  const ref = typeof value === "object" ? (value as { phaseName?: unknown; emoji?: unknown }) : undefined;
  if (ref !== undefined && typeof ref.phaseName === "string" && typeof ref.emoji === "string") return undefined;
  return optionError(scope, field, "must be null or a phase reference ({ phaseName, emoji, … })", value, hint);
}

/** The refusal's view of a value's type for INVALID_REGISTRY. */
function kindOf(value: unknown): string {
  if (value === null || typeof value !== "object") return value === null ? "null" : typeof value;
  try {
    return "currentPath" in value ? "a workflow state" : "an object";
  } catch {
    return "an object that cannot be read (a Proxy)";
  }
}

function isPrimitive(value: unknown): boolean {
  return value === null || (typeof value !== "object" && typeof value !== "function");
}
