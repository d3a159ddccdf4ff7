/**
 * The one place the pi wiring reaches into @phasekit/core. Core's public API is being reshaped (argument
 * order, outcome shapes); keeping every call behind these few functions makes that switch a one-file change.
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
  migrateState,
  notDoneReminder as coreNotDoneReminder,
  resolveActive as coreResolveActive,
  start as coreStart,
  statusLine as coreStatusLine,
  renderTemplate,
  toPersisted,
} from "@phasekit/core";
import type { ActiveWorkflow, DefinitionProblem, Happening, WorkflowError, WorkflowRegistry, WorkflowState } from "@phasekit/core";

export type { ActiveWorkflow, DefinitionProblem, Happening, WorkflowError, WorkflowRegistry, WorkflowState };
export { isLive, toPersisted };

/** A transition's result as the pi wiring uses it. */
export type Step = { ok: true; state: WorkflowState; happened: Happening } | { ok: false; error: WorkflowError; state: WorkflowState | null };

/** Compiles raw definitions: the registry of healthy workflows and every problem. */
export function compile(raw: Record<string, unknown>): { registry: WorkflowRegistry; problems: readonly DefinitionProblem[] } {
  const r = compileDefinitions(raw);
  return { registry: r.registry, problems: r.problems };
}

/** An empty registry (no definitions loaded yet). */
export function emptyRegistry(): WorkflowRegistry {
  return { workflows: new Map(), commands: new Map() };
}

/** Reads any persisted state shape (ours or pi-workflows 1.0.0's) into the current one. */
export function readState(raw: unknown): { ok: true; state: WorkflowState } | { ok: false; error: WorkflowError } {
  const r = migrateState(raw);
  return r.ok ? { ok: true, state: r.state } : { ok: false, error: r.error };
}

/** Starts a run. */
export function startRun(registry: WorkflowRegistry, workflowKey: string, taskId: string, taskDescription: string, now: number): Step {
  const r = coreStart(registry, { workflowKey, taskId, taskDescription }, { now });
  return r.ok ? r : { ok: false, error: r.error, state: null };
}

/** One `workflow_step` / command move. */
export function move(kind: "advance" | "loop" | "cancel" | "cancel-now" | "mark-notified", state: WorkflowState, registry: WorkflowRegistry, now: number): Step {
  const ctx = { now };
  switch (kind) {
    case "advance":
      return coreAdvance(state, registry, ctx);
    case "loop":
      return coreLoop(state, registry, ctx);
    case "cancel":
      return coreCancel(state, ctx);
    case "cancel-now":
      return coreCancelNow(state, ctx);
    case "mark-notified":
      return markCompletionNotified(state, ctx);
    default: {
      const never: never = kind;
      throw new Error(`unknown move ${String(never)}`);
    }
  }
}

/** The resolved run (current phase, breadcrumb, neighbours), or null when it has ended or does not resolve. */
export function active(state: WorkflowState | null, registry: WorkflowRegistry): ActiveWorkflow | null {
  if (state === null || !isLive(state)) return null;
  const r = coreResolveActive(state, registry);
  return r.ok ? r.active : null;
}

/** Why a live state does not resolve against the definitions (null when it does). */
export function resolveProblem(state: WorkflowState, registry: WorkflowRegistry): WorkflowError | null {
  const r = coreResolveActive(state, registry);
  return r.ok ? null : r.error;
}

/** The tool rule for `toolName` now. */
export function toolDecision(state: WorkflowState | null, registry: WorkflowRegistry, toolName: string): { allowed: true } | { allowed: false; reason: string } {
  return coreCheckTool(state, registry, toolName);
}

/** The hidden context prompt. */
export function contextPrompt(a: ActiveWorkflow): string {
  return coreContextPrompt(a);
}

/** The status-bar text. */
export function statusLine(a: ActiveWorkflow): string {
  return coreStatusLine(a);
}

/** The not-done reminder. */
export function notDoneReminder(a: ActiveWorkflow): string {
  return coreNotDoneReminder(a);
}

/** The end-of-run message of a finished run (null when it cannot be rendered). */
export function endOfRunText(state: WorkflowState, registry: WorkflowRegistry): string | null {
  const r = coreEndOfRunMessage(state, registry);
  return r.ok ? r.text : null;
}

const INITIAL_VARS: ReadonlySet<string> = new Set(["workflowName", "workflowKey", "description", "taskDescription", "taskId", "firstPhaseId", "firstPhaseName", "firstPhaseEmoji", "firstPhaseProfiles"]);
const DEFAULT_INITIAL = "Starting {workflowName} for: {description}\n\nBegin with {firstPhaseEmoji} {firstPhaseName}.";

/**
 * The first user message of a run. pi-workflows' `initialMessage` means the task by `{description}` and names
 * the first phase (`{firstPhaseName}` …), so it is rendered here with those variables, through core's renderer.
 */
export function initialUserMessage(state: WorkflowState, registry: WorkflowRegistry): string {
  const a = active(state, registry);
  const def = registry.workflows.get(state.workflowKey);
  const vars = {
    workflowName: def?.name ?? state.workflowKey,
    workflowKey: state.workflowKey,
    description: state.taskDescription,
    taskDescription: state.taskDescription,
    taskId: state.taskId,
    firstPhaseId: a?.phase.id,
    firstPhaseName: a?.phase.name,
    firstPhaseEmoji: a?.phase.emoji,
    firstPhaseProfiles: a ? (a.phase.availableProfiles ?? []).join(", ") || "(none)" : undefined,
  };
  return renderTemplate(def?.initialMessage ?? DEFAULT_INITIAL, vars, INITIAL_VARS);
}
