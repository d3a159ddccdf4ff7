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


/**
 * One level of a path, outermost first: the workflow, where in it, the entry there, and whether the path has
 * entered it (false for levels below a reference a migrated state rests on, shown but not yet pushed).
 */
export interface Level {
  readonly key: string;
  readonly def: WorkflowDefinition;
  readonly index: number;
  readonly entry: PhaseEntry;
  readonly entered: boolean;
}

type Found<T, C extends PathCode> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: Refusal<C> };

/** The definition of `key`, or MISSING_DEFINITION naming where on the path it was needed. */
export function definitionAt(scope: string, registry: WorkflowRegistry, key: string, depth: number): Found<WorkflowDefinition, "MISSING_DEFINITION"> {
  const def = registry.workflows.get(key);
  return def !== undefined ? { ok: true, value: def } : { ok: false, error: missingDefinition(scope, key, depth) };
}

/** The entry at `index` of `def`, or INVALID_PATH_INDEX. */
export function entryAt(scope: string, def: WorkflowDefinition, key: string, index: number, depth: number): Found<PhaseEntry, "INVALID_PATH_INDEX"> {
  const entry = def.phases[index];
  return entry !== undefined ? { ok: true, value: entry } : { ok: false, error: missingEntry(scope, def, key, index, depth) };
}

function missingDefinition(scope: string, key: string, depth: number): Refusal<"MISSING_DEFINITION"> {
  return refusal(scope, "MISSING_DEFINITION", `workflow "${key}" at currentPath[${depth}] is not among the loaded definitions.`, {
    field: `currentPath[${depth}].workflowKey`,
    value: key,
    workflowKey: key,
    hint: `Restore the definition of "${key}" (or fix its file), or cancel the run.`,
  });
}

function missingEntry(scope: string, def: WorkflowDefinition, key: string, index: number, depth: number): Refusal<"INVALID_PATH_INDEX"> {
  return refusal(scope, "INVALID_PATH_INDEX", `currentPath[${depth}] points at phase ${index} of workflow "${key}", which has ${def.phases.length} phase(s).`, {
    field: `currentPath[${depth}].phaseIndex`,
    value: index,
    workflowKey: key,
    hint: "The definition changed under a running workflow: restore it, or cancel the run (see checkDefinitions).",
  });
}

/** The one nesting rule: a path may hold at most MAX_NESTING levels (compile refuses deeper definitions). */
export function nestingError(scope: string, key: string, levels: number): Refusal<"NESTING_TOO_DEEP"> | undefined {
  if (levels <= MAX_NESTING) return undefined;
  return refusal(scope, "NESTING_TOO_DEEP", `entering sub-workflow "${key}" would nest deeper than ${MAX_NESTING} levels.`, {
    workflowKey: key,
    hint: "Flatten the chain of sub-workflows.",
  });
}

/** The level for segment (`key`, `index`) at `depth`, checked against the definitions. */
export function levelAt(scope: string, registry: WorkflowRegistry, key: string, index: number, depth: number, entered: boolean): Found<Level, PathCode> {
  const def = definitionAt(scope, registry, key, depth);
  if (!def.ok) return def;
  const entry = entryAt(scope, def.value, key, index, depth);
  if (!entry.ok) return entry;
  return { ok: true, value: { key, def: def.value, index, entry: entry.value, entered } };
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
  const deep = nestingError(scope, (path[path.length - 1] as PathSegment).workflowKey, path.length);
  if (deep !== undefined) return { ok: false, error: deep };
  const levels: Level[] = [];
  for (let d = 0; d < path.length; d++) {
    const seg = path[d] as PathSegment;
    // The hot path of every move and tool call: plain lookups, the refusal builders only on a miss.
    const def = registry.workflows.get(seg.workflowKey);
    const entry = def?.phases[seg.phaseIndex];
    if (def === undefined) return { ok: false, error: missingDefinition(scope, seg.workflowKey, d) };
    if (entry === undefined) return { ok: false, error: missingEntry(scope, def, seg.workflowKey, seg.phaseIndex, d) };
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
    levels.push({ key: seg.workflowKey, def, index: seg.phaseIndex, entry, entered: true });
  }
  return { ok: true, levels };
}

/**
 * The one descent into sub-workflows: from `entry`, found at path level `depth` (0-based) of workflow `owner`,
 * through every reference to a concrete phase, taking each referenced workflow's first entry (`"first"`: where a
 * run enters it) or last (`"last"`: what precedes the entry after it). Each level stepped into is passed to
 * `onLevel` (outermost first) with the nesting rule checked before it.
 */
export function descend(
  scope: string,
  registry: WorkflowRegistry,
  entry: PhaseEntry,
  owner: string,
  depth: number,
  end: "first" | "last",
  onLevel?: (level: Level) => void,
): Outcome<{ ref: PhaseRef; phase: PhaseDefinition }, PathCode> {
  let current = entry;
  let key = owner;
  let d = depth;
  while ("subworkflow" in current) {
    key = current.subworkflow;
    d += 1;
    const deep = nestingError(scope, key, d + 1);
    if (deep !== undefined) return { ok: false, error: deep };
    const def = definitionAt(scope, registry, key, d);
    if (!def.ok) return def;
    const index = end === "first" ? 0 : def.value.phases.length - 1;
    const next = entryAt(scope, def.value, key, index, d);
    if (!next.ok) return next;
    current = next.value;
    onLevel?.({ key, def: def.value, index, entry: current, entered: false });
  }
  return { ok: true, phase: current, ref: phaseRef(key, current, d + 1) };
}

/**
 * Pushes segments onto `path` (mutated: the caller owns the fresh array) while its top rests on a reference,
 * until a concrete phase (the descent a move makes). Returns that phase and the keys entered, outermost first.
 */
export function enterReferences(scope: string, registry: WorkflowRegistry, path: PathSegment[]): Outcome<{ phase: PhaseDefinition; entered: string[] }, PathCode> {
  const depth = path.length - 1;
  const top = path[depth] as PathSegment;
  const level = levelAt(scope, registry, top.workflowKey, top.phaseIndex, depth, true);
  if (!level.ok) return level;
  const entered: string[] = [];
  const r = descend(scope, registry, level.value.entry, top.workflowKey, depth, "first", (l) => {
    path.push(segment(l.key, 0, 0));
    entered.push(l.key);
  });
  return r.ok ? { ok: true, phase: r.phase, entered } : r;
}

/**
 * The one "what comes next" of a walked path: the innermost level that has an entry after its own, as
 * (depth, entry), or null when every level is on its last entry (advancing completes the run). `step` -1 asks
 * for the entry before instead (the previous phase's level).
 */
export function neighbour(levels: readonly Level[], step: 1 | -1): { readonly depth: number; readonly entry: PhaseEntry } | null {
  for (let d = levels.length - 1; d >= 0; d--) {
    const l = levels[d] as Level;
    const entry = l.def.phases[l.index + step];
    if (entry !== undefined) return { depth: d, entry };
  }
  return null;
}

/** A path segment, always built with the same fields in the same order (one object shape for the engine). */
export function segment(workflowKey: string, phaseIndex: number, loops: number): PathSegment {
  return { workflowKey, phaseIndex, loops };
}

/** A PhaseRef for `phase` of workflow `key`, found at path length `depth`. */
export function phaseRef(workflowKey: string, phase: PhaseDefinition, depth: number): PhaseRef {
  return { workflowKey, phaseId: phase.id, phaseName: phase.name, emoji: phase.emoji, depth };
}
