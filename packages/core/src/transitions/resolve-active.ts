/**
 * `resolveActive`: the state joined with its definitions: the current concrete phase, one breadcrumb item per
 * level, and the previous/next concrete phases. Counts and names come from each level's own definition, so
 * they are right at every depth (the seed used top-level counts inside sub-workflows).
 *
 * A finished run (completed, cancelled, failed) has no active phase: the result is a NOT_RUNNING error.
 * A paused run resolves like a running one. A migrated state that rests on a reference is shown drilled into
 * that reference's first concrete phase (levels marked `entered: false`); its `next` is that same phase,
 * because `advance` there only enters the reference (the seed's case 1).
 */
import type { PhaseDefinition, PhaseEntry, WorkflowDefinition, WorkflowRegistry } from "../definitions/schema.js";
import { WorkflowError, workflowError, type Result } from "../errors/workflow-error.js";
import { cycleError, definitionAt, drill, entryAt, MAX_DEPTH, phaseRef } from "./navigation.js";
import { isLive, type PathSegment, type WorkflowState } from "../state/schema.js";
import { statusError } from "./helpers.js";
import type { PhaseRef } from "./types.js";

const SCOPE = "resolve";

/** One level of the path as shown to people: the entry this level is at, and where it is in its workflow. */
export interface BreadcrumbItem {
  readonly workflowKey: string;
  readonly workflowName: string;
  /** The phase name, or the referenced workflow's name when this level sits on a sub-workflow. */
  readonly entryName: string;
  /** The phase emoji; "" for a sub-workflow level. */
  readonly emoji: string;
  readonly kind: "phase" | "subworkflow";
  /** 0-based position in this level's workflow, and that workflow's phase count. */
  readonly index: number;
  readonly total: number;
  /** False for levels below a reference the state rests on (not yet pushed onto the path). */
  readonly entered: boolean;
}

/** A running or paused state, resolved against its definitions. */
export interface ActiveWorkflow {
  readonly state: WorkflowState;
  /** The root workflow's definition. */
  readonly definition: WorkflowDefinition;
  /** The innermost workflow's definition (the scope `phase` belongs to). */
  readonly scope: WorkflowDefinition;
  readonly scopeKey: string;
  /** The definition of every breadcrumb level, outermost first (for texts the innermost workflow may override). */
  readonly scopes: readonly WorkflowDefinition[];
  /** The current concrete phase (never a reference). */
  readonly phase: PhaseDefinition;
  /** The raw entry at the top of `currentPath` (a reference for a state that rests on one). */
  readonly entry: PhaseEntry;
  readonly breadcrumb: readonly BreadcrumbItem[];
  /** The concrete phase before this one in definition order, or null at the very start. */
  readonly previousPhase: PhaseRef | null;
  /** The concrete phase `advance` moves to, or null when advancing completes the run. */
  readonly nextPhase: PhaseRef | null;
}

interface Level {
  key: string;
  def: WorkflowDefinition;
  index: number;
  entry: PhaseEntry;
  entered: boolean;
}

/** Resolves the state's path; a typed error when the run has finished or the path does not fit the definitions. */
export function resolveActive(state: WorkflowState, registry: WorkflowRegistry): Result<{ active: ActiveWorkflow }> {
  if (!isLive(state)) return { ok: false, error: statusError(SCOPE, state, "NOT_RUNNING", "running or paused") };
  const walked = walkPath(state, registry);
  if (!walked.ok) return walked;
  const levels = walked.levels;
  const restsOnRef = "subworkflow" in (levels[state.currentPath.length - 1] as Level).entry;
  const last = levels[levels.length - 1] as Level;
  const phase = last.entry as PhaseDefinition;
  const previous = previousPhase(registry, levels);
  if (!previous.ok) return previous;
  let nextPhase: PhaseRef | null = phaseRef(last.key, phase, levels.length);
  if (!restsOnRef) {
    const next = followingPhase(registry, levels);
    if (!next.ok) return next;
    nextPhase = next.ref;
  }
  const root = levels[0] as Level;
  const active: ActiveWorkflow = {
    state,
    definition: root.def,
    scope: last.def,
    scopeKey: last.key,
    scopes: levels.map((l) => l.def),
    phase,
    entry: (levels[state.currentPath.length - 1] as Level).entry,
    breadcrumb: levels.map((l) => crumb(registry, l)),
    previousPhase: previous.ref,
    nextPhase,
  };
  return { ok: true, active };
}

/** Every level of the path (checked: each non-top entry references the next level), then drilled levels. */
function walkPath(state: WorkflowState, registry: WorkflowRegistry): Result<{ levels: Level[] }> {
  const path = state.currentPath;
  if (path[0]?.workflowKey !== state.workflowKey) {
    const error = workflowError(SCOPE, "INVALID_STATE", `currentPath[0] is "${path[0]?.workflowKey}" but the run's workflow is "${state.workflowKey}".`, {
      field: "currentPath[0].workflowKey",
      value: path[0]?.workflowKey,
      workflowKey: state.workflowKey,
      hint: "The state was edited by hand: restore it from the journal, or cancel the run.",
    });
    return { ok: false, error };
  }
  const levels: Level[] = [];
  for (let d = 0; d < path.length; d++) {
    const seg = path[d] as PathSegment;
    const def = definitionAt(SCOPE, registry, seg.workflowKey, d);
    if (def instanceof WorkflowError) return { ok: false, error: def };
    const entry = entryAt(SCOPE, def, seg.workflowKey, seg.phaseIndex, d);
    if (entry instanceof WorkflowError) return { ok: false, error: entry };
    const below = path[d + 1];
    if (below !== undefined && !("subworkflow" in entry && entry.subworkflow === below.workflowKey)) {
      const error = workflowError(SCOPE, "INVALID_PATH_INDEX", `currentPath[${d}] (phase ${seg.phaseIndex} of "${seg.workflowKey}") does not reference "${below.workflowKey}" at currentPath[${d + 1}].`, {
        field: `currentPath[${d}].phaseIndex`,
        value: seg.phaseIndex,
        workflowKey: seg.workflowKey,
        hint: "The definition changed under a running workflow: restore it, or cancel the run.",
      });
      return { ok: false, error };
    }
    levels.push({ key: seg.workflowKey, def, index: seg.phaseIndex, entry, entered: true });
  }
  return drillLevels(registry, levels);
}

/** Adds not-yet-entered levels while the last level sits on a reference (a migrated state). */
function drillLevels(registry: WorkflowRegistry, levels: Level[]): Result<{ levels: Level[] }> {
  for (let last = levels[levels.length - 1] as Level; "subworkflow" in last.entry; last = levels[levels.length - 1] as Level) {
    const d = levels.length;
    const key = last.entry.subworkflow;
    if (d >= MAX_DEPTH) return { ok: false, error: cycleError(SCOPE, key) };
    const def = definitionAt(SCOPE, registry, key, d);
    if (def instanceof WorkflowError) return { ok: false, error: def };
    const entry = entryAt(SCOPE, def, key, 0, d);
    if (entry instanceof WorkflowError) return { ok: false, error: entry };
    levels.push({ key, def, index: 0, entry, entered: false });
  }
  return { ok: true, levels };
}

/** Walks outward from the innermost level to the nearest earlier entry, then drills to its last concrete phase. */
function previousPhase(registry: WorkflowRegistry, levels: readonly Level[]): Result<{ ref: PhaseRef | null }> {
  for (let d = levels.length - 1; d >= 0; d--) {
    const l = levels[d] as Level;
    const entry = l.def.phases[l.index - 1];
    if (entry === undefined) continue;
    const r = drill(SCOPE, registry, entry, l.key, d, "last");
    return r.ok ? { ok: true, ref: r.ref } : r;
  }
  return { ok: true, ref: null };
}

/** Mirrors `advance`: the next entry of the innermost unfinished scope, drilled to its first concrete phase. */
function followingPhase(registry: WorkflowRegistry, levels: readonly Level[]): Result<{ ref: PhaseRef | null }> {
  for (let d = levels.length - 1; d >= 0; d--) {
    const l = levels[d] as Level;
    const entry = l.def.phases[l.index + 1];
    if (entry === undefined) continue;
    const r = drill(SCOPE, registry, entry, l.key, d, "first");
    return r.ok ? { ok: true, ref: r.ref } : r;
  }
  return { ok: true, ref: null };
}

function crumb(registry: WorkflowRegistry, l: Level): BreadcrumbItem {
  const base = { workflowKey: l.key, workflowName: l.def.name, index: l.index, total: l.def.phases.length, entered: l.entered };
  if ("subworkflow" in l.entry) {
    const name = registry.workflows.get(l.entry.subworkflow)?.name ?? l.entry.subworkflow;
    return { ...base, entryName: name, emoji: "", kind: "subworkflow" };
  }
  return { ...base, entryName: l.entry.name, emoji: l.entry.emoji, kind: "phase" };
}
