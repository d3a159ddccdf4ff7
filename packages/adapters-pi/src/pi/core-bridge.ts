/**
 * The one place the pi wiring reaches into @phasekit/core (v2: registry first, refusals as plain data that change
 * nothing). The wiring keeps a `Step` that carries the state to keep on a refusal, so callers never need a
 * second variable for it; the refusal itself becomes a throwable `WorkflowError` here.
 */
import {
  advance as coreAdvance,
  cancel as coreCancel,
  cancelNow as coreCancelNow,
  checkTool as coreCheckTool,
  compileDefinitions,
  contextPrompt as coreContextPrompt,
  endOfRunMessage as coreEndOfRunMessage,
  isLive,
  loop as coreLoop,
  markCompletionNotified,
  pause as corePause,
  restartScope as coreRestartScope,
  carryPosition as coreCarryPosition,
  resume as coreResume,
  migrateState,
  refusalToError,
  notDoneReminder as coreNotDoneReminder,
  resolveActive as coreResolveActive,
  start as coreStart,
  statusLine as coreStatusLine,
  stepResultLine as coreStepResultLine,
  initialMessage as coreInitialMessage,
} from "@phasekit/core";
import type { ActiveWorkflow, DefinitionProblem, Happening, PhaseRef, TextOutcome, WorkflowChange, WorkflowError, WorkflowRegistry, WorkflowState } from "@phasekit/core";
import { persisted as toPersisted } from "../run/persisted.js";
import { approvalOnBranch } from "./approval-vars.js";
import type { BranchEntry } from "./host.js";

export type { ActiveWorkflow, DefinitionProblem, Happening, WorkflowChange, WorkflowError, WorkflowRegistry, WorkflowState };

export { isLive, toPersisted };

/** A transition's result as the pi wiring uses it. */
export type Step = { ok: true; state: WorkflowState; happened: Happening } | { ok: false; error: WorkflowError; state: WorkflowState | null };

/** Compiles raw definitions: the registry of healthy workflows and every problem. */
export function compile(raw: Record<string, unknown>): { registry: WorkflowRegistry; problems: readonly DefinitionProblem[] } {
  const r = compileDefinitions(raw, { keepHealthy: true });
  return r.ok ? { registry: r.registry, problems: r.problems } : { registry: emptyRegistry(), problems: r.problems };
}

let EMPTY: WorkflowRegistry | undefined;

/** An empty registry (no definitions loaded yet). */
export function emptyRegistry(): WorkflowRegistry {
  if (EMPTY === undefined) {
    const r = compileDefinitions({});
    if (!r.ok) throw refusalToError(r.error); // cannot happen: an empty set has no problems
    EMPTY = r.registry;
  }
  return EMPTY;
}

/** Reads any persisted state shape (ours or pi-workflows 1.0.0's) into the current one. */
export function readState(raw: unknown): { ok: true; state: WorkflowState } | { ok: false; error: WorkflowError } {
  const r = migrateState(raw);
  return r.ok ? { ok: true, state: r.state } : { ok: false, error: refusalToError(r.error) };
}

/** Starts a run. */
export function startRun(registry: WorkflowRegistry, workflowKey: string, taskId: string, taskDescription: string, now: number): Step {
  const r = coreStart(registry, { workflowKey, taskId, taskDescription }, { now });
  return r.ok ? { ok: true, state: r.state, happened: r.happened } : { ok: false, error: refusalToError(r.error), state: null };
}

/** One `workflow_step` / command move; "carry" moves the run from `pinned` onto `registry` at the same phase. */
export function move(kind: "advance" | "loop" | "cancel" | "cancel-now" | "mark-notified" | "pause" | "resume" | "restart-scope" | "carry", state: WorkflowState, registry: WorkflowRegistry, now: number, pinned?: WorkflowRegistry): Step {
  const ctx = { now };
  const r = (() => {
    switch (kind) {
      case "advance":
        return coreAdvance(registry, state, ctx);
      case "loop":
        return coreLoop(registry, state, ctx);
      case "cancel":
        return coreCancel(registry, state, ctx);
      case "cancel-now":
        return coreCancelNow(registry, state, ctx);
      case "mark-notified":
        return markCompletionNotified(registry, state, ctx);
      case "pause":
        return corePause(registry, state, ctx);
      case "resume":
        return coreResume(registry, state, ctx);
      case "restart-scope":
        return coreRestartScope(registry, state, ctx);
      case "carry":
        return coreCarryPosition(registry, state, pinned ?? registry, ctx);
      default: {
        const never: never = kind;
        throw new Error(`unknown move ${String(never)}`);
      }
    }
  })();
  // A v2 refusal changes nothing: the state to keep is the one we passed in.
  return r.ok ? { ok: true, state: r.state, happened: r.happened } : { ok: false, error: refusalToError(r.error), state };
}

/** The resolved run (current phase, breadcrumb, neighbours), or null when it has ended or does not resolve. */
export function active(state: WorkflowState | null, registry: WorkflowRegistry): ActiveWorkflow | null {
  if (state === null || !isLive(state)) return null;
  const r = coreResolveActive(registry, state);
  return r.ok ? r.active : null;
}

/** Why a live state does not resolve against the definitions (null when it does). */
export function resolveProblem(state: WorkflowState, registry: WorkflowRegistry): WorkflowError | null {
  const r = coreResolveActive(registry, state);
  return r.ok ? null : refusalToError(r.error);
}

/**
 * The tool rule for `toolName` now. A run whose position no longer resolves blocks every tool (core's documented
 * rule for an unresolvable run), with core's reason, until the user cancels or restarts the scope.
 */
export function toolDecision(state: WorkflowState | null, registry: WorkflowRegistry, toolName: string): { allowed: true } | { allowed: false; reason: string } {
  const r = coreCheckTool(registry, state, toolName);
  if (!r.ok) return { allowed: false, reason: r.error.message };
  return r.allowed ? { allowed: true } : { allowed: false, reason: r.reason };
}

/** A core text of values core made (an ActiveWorkflow from resolveActive): a refusal would be a wiring bug, thrown. */
function textOf(r: TextOutcome): string {
  if (!r.ok) throw refusalToError(r.error);
  return r.text;
}

/** The hidden context prompt; `branch` supplies `{approval}` (the last approval's payload on it). */
export function contextPrompt(a: ActiveWorkflow, branch?: readonly BranchEntry[]): string {
  const approval = branch === undefined ? undefined : approvalOnBranch(branch, a.state.taskId);
  return textOf(coreContextPrompt(a, approval === undefined ? undefined : { approval }));
}

/** The status-bar text. */
export function statusLine(a: ActiveWorkflow): string {
  return textOf(coreStatusLine(a));
}

/** The not-done reminder. */
export function notDoneReminder(a: ActiveWorkflow): string {
  return textOf(coreNotDoneReminder(a));
}

/** The first line of a workflow_step result. */
export function stepResultLine(happened: Happening, from: string, to: PhaseRef | null, next: PhaseRef | null, workflowName: string): string {
  return textOf(coreStepResultLine(happened, from, to, next, workflowName));
}

/** The end-of-run message of a finished run (null when it cannot be rendered). */
export function endOfRunText(state: WorkflowState, registry: WorkflowRegistry): string | null {
  const r = coreEndOfRunMessage(registry, state);
  return r.ok ? r.text : null;
}

const DEFAULT_INITIAL = "Starting {workflowName} for: {description}\n\nBegin with {firstPhaseEmoji} {firstPhaseName}.";

/**
 * The first user message of a run: the workflow's `initialMessage` (pi's meaning: `{description}` is the task,
 * `{firstPhase…}` the first phase), else pi-workflows' default, both rendered by core's `initialMessage`.
 */
export function initialUserMessage(state: WorkflowState, registry: WorkflowRegistry): string {
  const r = coreInitialMessage(registry, state, { fallback: DEFAULT_INITIAL });
  return r.ok && r.text !== null ? r.text : `Starting ${state.workflowKey} for: ${state.taskDescription}`;
}
