/**
 * `resolveActive`: the state joined with its definitions: the current concrete phase, one breadcrumb item per
 * level, and the previous/next concrete phases. Counts and names come from each level's own definition, so
 * they are right at every depth (the seed used top-level counts inside sub-workflows).
 *
 * A finished run (completed, cancelled, failed) has no active phase: `{ ok: true, active: null }`.
 * A paused run resolves like a running one. A migrated state that rests on a reference is shown drilled into
 * that reference's first concrete phase (levels marked `entered: false`); its `next` is that same phase,
 * because `advance` there only enters the reference (the seed's case 1).
 */
import type { PhaseDefinition, PhaseEntry, WorkflowDefinition } from "../definitions/schema.js";
import type { WorkflowRegistry } from "../definitions/registry.js";
import type { Outcome } from "../errors/refusal.js";
import { descend, neighbour, walkPath, type Level } from "./navigation.js";
import { markActive, registryError, stateError } from "./arguments.js";
import { isLive, type WorkflowState } from "../state/schema.js";
import type { CommonCode, PathCode, PhaseRef } from "./types.js";

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

/**
 * A running or paused state, resolved against its definitions. Only `resolveActive` makes one: the texts that
 * take an ActiveWorkflow (statusLine, contextPrompt, notDoneReminder) refuse anything else with INVALID_OPTIONS.
 */
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

/** The refusal codes of `resolveActive` (and of `checkTool`, which resolves first). */
export type ResolveCode = CommonCode | PathCode;

/**
 * Resolves the state's path with the same walker `advance` uses. A finished run has nothing to show:
 * `{ ok: true, active: null }`. A path that does not fit the definitions is a refusal.
 */
export function resolveActive(registry: WorkflowRegistry, state: WorkflowState): Outcome<{ active: ActiveWorkflow | null }, ResolveCode> {
  const bad = registryError(SCOPE, registry) ?? stateError(SCOPE, state);
  if (bad !== undefined) return { ok: false, error: bad };
  if (!isLive(state)) return { ok: true, active: null };
  const walked = walkPath(SCOPE, registry, state);
  if (!walked.ok) return walked;
  const levels = walked.levels;
  const restsOn = levels[levels.length - 1] as Level;
  // A migrated state resting on a reference is shown drilled into it (levels not yet entered).
  const drilled = descend(SCOPE, registry, restsOn.entry, restsOn.key, levels.length - 1, "first", (l) => levels.push(l));
  if (!drilled.ok) return drilled;
  const last = levels[levels.length - 1] as Level;
  const previous = nameOf(registry, levels, -1);
  if (!previous.ok) return previous;
  let nextPhase: PhaseRef | null = drilled.ref;
  if (restsOn === last) {
    const next = nameOf(registry, levels, 1);
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
    phase: drilled.phase,
    entry: restsOn.entry,
    breadcrumb: levels.map((l) => crumb(registry, l)),
    previousPhase: previous.ref,
    nextPhase,
  };
  return { ok: true, active: markActive(active) };
}

/**
 * The concrete phase before (`-1`) or after (`1`) the current one: the one "what comes next" of `advance`
 * (neighbour), drilled to the last or first concrete phase of a reference there.
 */
function nameOf(registry: WorkflowRegistry, levels: readonly Level[], step: 1 | -1): Outcome<{ ref: PhaseRef | null }, PathCode> {
  const n = neighbour(levels, step);
  if (n === null) return { ok: true, ref: null };
  const r = descend(SCOPE, registry, n.entry, (levels[n.depth] as Level).key, n.depth, step === 1 ? "first" : "last");
  return r.ok ? { ok: true, ref: r.ref } : r;
}

function crumb(registry: WorkflowRegistry, l: Level): BreadcrumbItem {
  // Plain literals of one shape (no spread): this runs per level on every resolve, the hot path of a state change.
  const e = l.entry;
  if ("subworkflow" in e) {
    const name = registry.workflows.get(e.subworkflow)?.name ?? e.subworkflow;
    return { workflowKey: l.key, workflowName: l.def.name, entryName: name, emoji: "", kind: "subworkflow", index: l.index, total: l.def.phases.length, entered: l.entered };
  }
  return { workflowKey: l.key, workflowName: l.def.name, entryName: e.name, emoji: e.emoji, kind: "phase", index: l.index, total: l.def.phases.length, entered: l.entered };
}
