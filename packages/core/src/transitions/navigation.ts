/**
 * The one path walker. Every function that reads a `currentPath` (advance, loop, resolveActive, checkTool,
 * checkDefinitions) walks it here first, and a path that does not fit the definitions is refused with the
 * same typed error by all of them: an empty path, a root that is not the run's workflow, a missing workflow,
 * an index out of range, or a level whose entry does not reference the level below it.
 */
import type { PhaseDefinition, PhaseEntry, WorkflowDefinition } from "../definitions/schema.js";
import { MAX_NESTING, type WorkflowRegistry } from "../definitions/registry.js";
import { refusal, type Outcome, type Refusal } from "../errors/refusal.js";
import type { PathSegment, WorkflowState } from "../state/schema.js";
import type { PathCode, PhaseRef } from "./types.js";


/** One walked level: the segment, its workflow's definition, and the entry the segment points at. */
export interface Level {
  readonly key: string;
  readonly def: WorkflowDefinition;
  readonly index: number;
  readonly entry: PhaseEntry;
}

/** The definition of `key`, or MISSING_DEFINITION naming where on the path it was needed. */
export function definitionAt(scope: string, registry: WorkflowRegistry, key: string, depth: number): WorkflowDefinition | Refusal<"MISSING_DEFINITION"> {
  const def = registry.workflows.get(key);
  if (def !== undefined) return def;
  return refusal(scope, "MISSING_DEFINITION", `workflow "${key}" at currentPath[${depth}] is not among the loaded definitions.`, {
    field: `currentPath[${depth}].workflowKey`,
    value: key,
    workflowKey: key,
    hint: `Restore the definition of "${key}" (or fix its file), or cancel the run.`,
  });
}

/** The entry at `index` of `def`, or INVALID_PATH_INDEX. */
export function entryAt(scope: string, def: WorkflowDefinition, key: string, index: number, depth: number): PhaseEntry | Refusal<"INVALID_PATH_INDEX"> {
  const entry = def.phases[index];
  if (entry !== undefined) return entry;
  return refusal(scope, "INVALID_PATH_INDEX", `currentPath[${depth}] points at phase ${index} of workflow "${key}", which has ${def.phases.length} phase(s).`, {
    field: `currentPath[${depth}].phaseIndex`,
    value: index,
    workflowKey: key,
    hint: "The definition changed under a running workflow: restore it, or cancel the run (see checkDefinitions).",
  });
}

/** The refusal for nesting deeper than MAX_NESTING (compile refuses such definitions; a state may still hold one). */
export function nestingError(scope: string, key: string): Refusal<"NESTING_TOO_DEEP"> {
  return refusal(scope, "NESTING_TOO_DEEP", `entering sub-workflow "${key}" would nest deeper than ${MAX_NESTING} levels.`, {
    workflowKey: key,
    hint: "Flatten the chain of sub-workflows.",
  });
}

// Definitions and entries are strict shapes without a `details` field, so its presence marks a refusal.
function isLevelError(v: object): v is Refusal {
  return "details" in v;
}

/** Walks and checks every segment of `state.currentPath`; the levels, outermost first, or why the path is broken. */
export function walkPath(scope: string, registry: WorkflowRegistry, state: WorkflowState): Outcome<{ levels: Level[] }, PathCode> {
  const path = state.currentPath;
  const root = path[0];
  if (root === undefined || root.workflowKey !== state.workflowKey) {
    const reason = root === undefined ? "currentPath is empty" : `currentPath[0] is "${root.workflowKey}" but the run's workflow is "${state.workflowKey}"`;
    return {
      ok: false,
      error: refusal(scope, "INVALID_STATE", `${reason}.`, {
        field: root === undefined ? "currentPath" : "currentPath[0].workflowKey",
        value: root?.workflowKey,
        workflowKey: state.workflowKey,
        hint: "The state was edited by hand: restore it from the journal, or cancel the run.",
      }),
    };
  }
  if (path.length > MAX_NESTING) return { ok: false, error: nestingError(scope, (path[path.length - 1] as PathSegment).workflowKey) };
  const levels: Level[] = [];
  for (let d = 0; d < path.length; d++) {
    const seg = path[d] as PathSegment;
    const def = definitionAt(scope, registry, seg.workflowKey, d);
    if (isLevelError(def)) return { ok: false, error: def };
    const entry = entryAt(scope, def, seg.workflowKey, seg.phaseIndex, d);
    if (isLevelError(entry)) return { ok: false, error: entry };
    const below = path[d + 1];
    if (below !== undefined && !("subworkflow" in entry && entry.subworkflow === below.workflowKey)) {
      const error = refusal(scope, "INVALID_PATH_INDEX", `currentPath[${d}] (phase ${seg.phaseIndex} of "${seg.workflowKey}") does not reference "${below.workflowKey}" at currentPath[${d + 1}].`, {
        field: `currentPath[${d}].phaseIndex`,
        value: seg.phaseIndex,
        workflowKey: seg.workflowKey,
        hint: "The definition changed under a running workflow: restore it, or cancel the run (see checkDefinitions).",
      });
      return { ok: false, error };
    }
    levels.push({ key: seg.workflowKey, def, index: seg.phaseIndex, entry });
  }
  return { ok: true, levels };
}

/**
 * Pushes segments onto `path` (mutated: the caller owns the fresh array) while its top rests on a reference,
 * until a concrete phase. Returns that phase and the keys entered, outermost first.
 */
export function enterReferences(scope: string, registry: WorkflowRegistry, path: PathSegment[]): Outcome<{ phase: PhaseDefinition; entered: string[] }, PathCode> {
  const entered: string[] = [];
  for (;;) {
    const depth = path.length - 1;
    const top = path[depth] as PathSegment;
    const def = definitionAt(scope, registry, top.workflowKey, depth);
    if (isLevelError(def)) return { ok: false, error: def };
    const entry = entryAt(scope, def, top.workflowKey, top.phaseIndex, depth);
    if (isLevelError(entry)) return { ok: false, error: entry };
    if (!("subworkflow" in entry)) return { ok: true, phase: entry, entered };
    if (path.length >= MAX_NESTING) return { ok: false, error: nestingError(scope, entry.subworkflow) };
    path.push(segment(entry.subworkflow, 0, 0));
    entered.push(entry.subworkflow);
  }
}

/** A path segment, always built with the same fields in the same order (one object shape for the engine). */
export function segment(workflowKey: string, phaseIndex: number, loops: number): PathSegment {
  return { workflowKey, phaseIndex, loops };
}

/**
 * The concrete phase reached from `entry` (found at `depth`) by drilling into references: their first phase
 * (`"first"`) or their last one (`"last"`). Used to name previous/next phases without moving.
 */
export function drill(
  scope: string,
  registry: WorkflowRegistry,
  entry: PhaseEntry,
  owner: string,
  depth: number,
  end: "first" | "last",
): Outcome<{ ref: PhaseRef; phase: PhaseDefinition }, PathCode> {
  let current = entry;
  let key = owner;
  let d = depth;
  while ("subworkflow" in current) {
    if (d + 2 > MAX_NESTING) return { ok: false, error: nestingError(scope, current.subworkflow) };
    key = current.subworkflow;
    d += 1;
    const def = definitionAt(scope, registry, key, d);
    if (isLevelError(def)) return { ok: false, error: def };
    const next = entryAt(scope, def, key, end === "first" ? 0 : def.phases.length - 1, d);
    if (isLevelError(next)) return { ok: false, error: next };
    current = next;
  }
  return { ok: true, phase: current, ref: phaseRef(key, current, d + 1) };
}

/** A PhaseRef for `phase` of workflow `key`, found at path length `depth`. */
export function phaseRef(workflowKey: string, phase: PhaseDefinition, depth: number): PhaseRef {
  return { workflowKey, phaseId: phase.id, phaseName: phase.name, emoji: phase.emoji, depth };
}
