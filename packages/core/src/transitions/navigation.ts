/**
 * Walking the definitions along a `currentPath`: the entry at a segment, entering references until a concrete
 * phase, and the first/last concrete phase below an entry. A missing definition or an index out of range is a
 * typed error here, so no caller can mistake a broken path for "all phases complete".
 */
import type { PhaseDefinition, PhaseEntry, WorkflowDefinition, WorkflowRegistry } from "../definitions/schema.js";
import { WorkflowError, workflowError, type Result } from "../errors/workflow-error.js";
import type { PathSegment } from "../state/schema.js";
import type { PhaseRef } from "./types.js";

/** Nesting deeper than this can only come from a reference cycle (compileDefinitions rejects cycles). */
export const MAX_DEPTH = 32;

/** The definition of `key`, or a MISSING_DEFINITION error naming where on the path it was needed. */
export function definitionAt(scope: string, registry: WorkflowRegistry, key: string, depth: number): WorkflowDefinition | WorkflowError {
  const def = registry.workflows.get(key);
  if (def !== undefined) return def;
  return workflowError(scope, "MISSING_DEFINITION", `workflow "${key}" at currentPath[${depth}] is not among the loaded definitions.`, {
    field: `currentPath[${depth}].workflowKey`,
    value: key,
    workflowKey: key,
    hint: `Restore the definition of "${key}" (or fix its file), or cancel the run.`,
  });
}

/** The error for a phase index that does not exist in its workflow (including a workflow without phases). */
export function indexError(scope: string, key: string, index: number, total: number, depth: number): WorkflowError {
  return workflowError(scope, "INVALID_PATH_INDEX", `currentPath[${depth}] points at phase ${index} of workflow "${key}", which has ${total} phase(s).`, {
    field: `currentPath[${depth}].phaseIndex`,
    value: index,
    workflowKey: key,
    hint: "The definition changed under a running workflow: restore it, or cancel the run.",
  });
}

/** The entry at `index` of `def`, or INVALID_PATH_INDEX. */
export function entryAt(scope: string, def: WorkflowDefinition, key: string, index: number, depth: number): PhaseEntry | WorkflowError {
  const entry = def.phases[index];
  return entry === undefined ? indexError(scope, key, index, def.phases.length, depth) : entry;
}

/** The error for nesting deeper than MAX_DEPTH, which only a reference cycle produces. */
export function cycleError(scope: string, key: string): WorkflowError {
  return workflowError(scope, "DEFINITION_CYCLE", `entering sub-workflow "${key}" nests deeper than ${MAX_DEPTH} levels.`, {
    workflowKey: key,
    hint: "Remove the reference cycle from the definitions.",
  });
}

/**
 * Pushes segments onto `path` (mutated: the caller owns the fresh array) while its top rests on a reference,
 * until a concrete phase. Returns that phase and the keys entered, outermost first.
 */
export function enterReferences(scope: string, registry: WorkflowRegistry, path: PathSegment[]): Result<{ phase: PhaseDefinition; entered: string[] }> {
  const entered: string[] = [];
  for (;;) {
    const depth = path.length - 1;
    const top = path[depth] as PathSegment;
    const def = definitionAt(scope, registry, top.workflowKey, depth);
    if (def instanceof WorkflowError) return { ok: false, error: def };
    const entry = entryAt(scope, def, top.workflowKey, top.phaseIndex, depth);
    if (entry instanceof WorkflowError) return { ok: false, error: entry };
    if (!("subworkflow" in entry)) return { ok: true, phase: entry, entered };
    if (path.length >= MAX_DEPTH) return { ok: false, error: cycleError(scope, entry.subworkflow) };
    path.push({ workflowKey: entry.subworkflow, phaseIndex: 0, loops: 0 });
    entered.push(entry.subworkflow);
  }
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
): Result<{ ref: PhaseRef; phase: PhaseDefinition }> {
  let current = entry;
  let key = owner;
  let d = depth;
  while ("subworkflow" in current) {
    if (d + 1 >= MAX_DEPTH) return { ok: false, error: cycleError(scope, current.subworkflow) };
    key = current.subworkflow;
    d += 1;
    const def = definitionAt(scope, registry, key, d);
    if (def instanceof WorkflowError) return { ok: false, error: def };
    const index = end === "first" ? 0 : def.phases.length - 1;
    const next = entryAt(scope, def, key, index, d);
    if (next instanceof WorkflowError) return { ok: false, error: next };
    current = next;
  }
  return { ok: true, phase: current, ref: phaseRef(key, current, d + 1) };
}

/** A PhaseRef for `phase` of workflow `key`, found at path length `depth`. */
export function phaseRef(workflowKey: string, phase: PhaseDefinition, depth: number): PhaseRef {
  return { workflowKey, phaseId: phase.id, phaseName: phase.name, emoji: phase.emoji, depth };
}

/** Counts the concrete phases of a workflow with every reference expanded once (for "phases completed"). */
export function countConcretePhases(registry: WorkflowRegistry, key: string, depth = 0): number {
  const def = registry.workflows.get(key);
  if (def === undefined || depth >= MAX_DEPTH) return 0;
  let n = 0;
  for (const entry of def.phases) n += "subworkflow" in entry ? countConcretePhases(registry, entry.subworkflow, depth + 1) : 1;
  return n;
}
