/** Shared fixtures for the core tests: compiled registries, a deep definition set, and state builders. */
import { compileDefinitions } from "../../src/definitions/compile.js";
import { sealRegistry, type WorkflowRegistry } from "../../src/definitions/registry.js";
import { refusalToError } from "../../src/errors/refusal.js";
import { start } from "../../src/transitions/start.js";
import { resolveActive, type ActiveWorkflow } from "../../src/transitions/resolve-active.js";
import { STATE_SCHEMA_VERSION, type PathSegment, type WorkflowState } from "../../src/state/schema.js";

/** Compiles definitions and fails the test with every problem when they do not compile. */
export function registryOf(raw: unknown): WorkflowRegistry {
  const r = compileDefinitions(raw);
  if (!r.ok) throw new Error(`fixture definitions do not compile:\n${r.problems.map((p) => p.message).join("\n")}`);
  return r.registry;
}

/**
 * A copy of `registry` without `key`, as if its definition file vanished while a run was live. Built with the
 * internal sealer: compile itself would drop every workflow that references `key` as well.
 */
export function without(registry: WorkflowRegistry, key: string): WorkflowRegistry {
  const drop = <V>(m: ReadonlyMap<string, V>): Map<string, V> => new Map([...m].filter(([k]) => k !== key));
  return sealRegistry({ workflows: drop(registry.workflows), commands: drop(registry.commands), phaseCounts: drop(registry.phaseCounts), fingerprints: drop(registry.fingerprints) });
}

/**
 * Three levels with references at phase 0 and at the last position:
 *   outer [→ mid, o2, → tail]   mid [→ inner, m2]   inner [i1, i2] (maxLoops 1)   tail [t1, → inner]
 *   flat [f1, f2] (not loopable)
 */
export const deepDefinitions = {
  outer: { name: "Outer", loopable: false, phases: [{ subworkflow: "mid" }, { id: "o2", name: "Outer Two", emoji: "🅾️" }, { subworkflow: "tail" }] },
  mid: { name: "Middle", show: false, phases: [{ subworkflow: "inner" }, { id: "m2", name: "Middle Two" }] },
  inner: { name: "Inner", show: false, maxLoops: 1, phases: [{ id: "i1", name: "Inner One", emoji: "1️⃣" }, { id: "i2", name: "Inner Two", emoji: "2️⃣" }] },
  tail: { name: "Tail", show: false, phases: [{ id: "t1", name: "Tail One" }, { subworkflow: "inner" }] },
  flat: { name: "Flat", loopable: false, phases: [{ id: "f1", name: "Flat One" }, { id: "f2", name: "Flat Two" }] },
};

/** The compiled deep registry. */
export const deep: WorkflowRegistry = registryOf(deepDefinitions);

/** A fresh running state of `key` (through `start`). */
export function started(registry: WorkflowRegistry, key: string, now = 1_000): WorkflowState {
  const r = start(registry, { workflowKey: key, taskId: "task-1", taskDescription: "Do the thing" }, { now });
  if (!r.ok) throw refusalToError(r.error);
  return r.state;
}

/** A running state placed at an explicit path (as a migration could produce). */
export function at(key: string, path: Array<[string, number, number?]>, extra: Partial<WorkflowState> = {}): WorkflowState {
  const currentPath: PathSegment[] = path.map(([workflowKey, phaseIndex, loops]) => ({ workflowKey, phaseIndex, loops: loops ?? 0 }));
  return {
    schemaVersion: STATE_SCHEMA_VERSION,
    workflowKey: key,
    status: "running",
    currentPath,
    globalStepCount: 10,
    loopCount: 0,
    taskId: "task-1",
    taskDescription: "Do the thing",
    startedAt: 1_000,
    updatedAt: 1_000,
    generation: 5,
    completionNotified: false,
    cancelPending: false,
    ...extra,
  };
}

/** Compact form of a path for assertions: `outer:0/mid:0/inner:1`. */
export function pathOf(state: WorkflowState): string {
  return state.currentPath.map((s) => `${s.workflowKey}:${s.phaseIndex}${s.loops > 0 ? `(${s.loops})` : ""}`).join("/");
}

/** Freezes a value and everything inside it, so any mutation by the code under test throws. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** The resolved active run (a refusal or a finished run fails the test). */
export function activeOf(registry: WorkflowRegistry, state: WorkflowState): ActiveWorkflow {
  const r = resolveActive(registry, state);
  if (!r.ok) throw refusalToError(r.error);
  if (r.active === null) throw new Error(`run is ${state.status}: nothing to resolve`);
  return r.active;
}
