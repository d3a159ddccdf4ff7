/**
 * End-of-run and not-done messages. Completed, cancelled and failed runs each have their own text; the
 * cancelled one comes from `cancelledMessage` (the seed reused `completionMessage` there).
 */
import type { WorkflowDefinition } from "../definitions/schema.js";
import type { WorkflowRegistry } from "../definitions/registry.js";
import type { Outcome } from "../errors/refusal.js";
import { definitionAt, descend } from "../transitions/navigation.js";
import { statusRefusal } from "../transitions/apply.js";
import { registryError, stateError, stringError } from "../transitions/arguments.js";
import type { CommonCode } from "../transitions/types.js";
import { pickText, promptVars } from "./prompt-vars.js";
import type { ActiveWorkflow } from "../transitions/resolve-active.js";
import type { WorkflowState } from "../state/schema.js";
import { CANCELLED_VARS, COMPLETION_VARS, FAILED_VARS, INITIAL_MESSAGE_VARS, NOT_DONE_VARS, PROMPT_VARS, renderTemplate } from "../definitions/template.js";
import { DEFAULT_CANCELLED_MESSAGE, DEFAULT_COMPLETION_MESSAGE, DEFAULT_FAILED_MESSAGE, DEFAULT_NOT_DONE_REMINDER } from "./text.js";

/** Which end a run reached, with the text to show the user. */
export type EndOfRunMessage = { readonly kind: "completed" | "cancelled" | "failed"; readonly text: string };

/** The refusal codes of the message functions. */
export type MessageCode = CommonCode | "MISSING_DEFINITION";
type Text = Outcome<{ text: string }, MessageCode>;

/** The argument checks of every message function, then the run's root definition. */
function rootOf(registry: WorkflowRegistry, state: WorkflowState): Outcome<{ value: WorkflowDefinition }, MessageCode> {
  const bad = registryError("messages", registry) ?? stateError("messages", state);
  return bad !== undefined ? { ok: false, error: bad } : definitionAt("messages", registry, state.workflowKey, 0);
}

/** The completion message (definition's `completionMessage` or the default). */
export function completionMessage(registry: WorkflowRegistry, state: WorkflowState): Text {
  const root = rootOf(registry, state);
  if (!root.ok) return root;
  const def = root.value;
  const vars = { workflowName: def.name, taskDescription: state.taskDescription, taskId: state.taskId, phaseCount: registry.phaseCounts.get(state.workflowKey) ?? 0 };
  return { ok: true, text: renderTemplate(def.completionMessage ?? DEFAULT_COMPLETION_MESSAGE, vars, COMPLETION_VARS) };
}

/** The cancelled message (definition's `cancelledMessage` or its own default — never the completion text). */
export function cancelledMessage(registry: WorkflowRegistry, state: WorkflowState): Text {
  const root = rootOf(registry, state);
  if (!root.ok) return root;
  const def = root.value;
  const top = state.currentPath[state.currentPath.length - 1];
  const phase = top === undefined ? undefined : registry.workflows.get(top.workflowKey)?.phases[top.phaseIndex];
  const phaseName = phase !== undefined && "name" in phase ? phase.name : undefined;
  const phaseCount = registry.phaseCounts.get(state.workflowKey) ?? 0;
  const vars = { workflowName: def.name, taskDescription: state.taskDescription, taskId: state.taskId, phaseCount, phaseName };
  return { ok: true, text: renderTemplate(def.cancelledMessage ?? DEFAULT_CANCELLED_MESSAGE, vars, CANCELLED_VARS) };
}

/** The failed message, with the recorded reason. */
export function failedMessage(registry: WorkflowRegistry, state: WorkflowState): Text {
  const root = rootOf(registry, state);
  if (!root.ok) return root;
  const def = root.value;
  const vars = { workflowName: def.name, taskDescription: state.taskDescription, taskId: state.taskId, failureReason: state.failureReason ?? "unknown" };
  return { ok: true, text: renderTemplate(DEFAULT_FAILED_MESSAGE, vars, FAILED_VARS) };
}

/** The message for a finished run, chosen by its status; NOT_FINISHED while it is still live. */
export function endOfRunMessage(registry: WorkflowRegistry, state: WorkflowState): Outcome<EndOfRunMessage, MessageCode | "NOT_FINISHED"> {
  const root = rootOf(registry, state);
  if (!root.ok) return root;
  if (state.status === "running" || state.status === "paused") {
    return { ok: false, error: statusRefusal("messages", state, "NOT_FINISHED", "completed, cancelled or failed") };
  }
  const kind = state.status;
  const r = kind === "completed" ? completionMessage(registry, state) : kind === "cancelled" ? cancelledMessage(registry, state) : failedMessage(registry, state);
  return r.ok ? { ok: true, kind, text: r.text } : r;
}

/** The reminder sent when the agent stops mid-run; the phase instructions inside it are rendered first. */
export function notDoneReminder(active: ActiveWorkflow): string {
  const { state, phase, definition } = active;
  const instructions = renderTemplate(phase.instructions, promptVars(active), PROMPT_VARS);
  const vars = {
    workflowName: definition.name,
    phaseName: phase.name,
    phaseEmoji: phase.emoji,
    phaseInstructions: instructions,
    taskDescription: state.taskDescription,
    taskId: state.taskId,
    workflowKey: state.workflowKey,
  };
  return renderTemplate(pickText(active, "notDoneReminder") ?? DEFAULT_NOT_DONE_REMINDER, vars, NOT_DONE_VARS);
}

/**
 * The workflow's `initialMessage` (else `options.fallback`) rendered for this run, or null when there is neither. As in pi-workflows,
 * `{description}` is the user's task and `{firstPhase…}` name the first concrete phase (references drilled into);
 * `{firstPhaseProfiles}` is its profiles joined by ", ", "(none)" when it lists none.
 */
export function initialMessage(registry: WorkflowRegistry, state: WorkflowState, options: { fallback?: string } = {}): Outcome<{ text: string | null }, MessageCode> {
  const root = rootOf(registry, state);
  if (!root.ok) return root;
  const fallback = options?.fallback;
  if (fallback !== undefined) {
    const bad = stringError("messages", "fallback", fallback, "pass the text to render when the workflow has no initialMessage");
    if (bad !== undefined) return { ok: false, error: bad };
  }
  const def = root.value;
  // A host with a first message of its own (pi's default) renders it with the same variables.
  const template = def.initialMessage ?? fallback;
  if (template === undefined) return { ok: true, text: null };
  const entry = def.phases[0];
  const first = entry === undefined ? undefined : descend("messages", registry, entry, state.workflowKey, 0, "first");
  const phase = first?.ok === true ? first.phase : undefined;
  const vars = {
    workflowName: def.name,
    workflowKey: state.workflowKey,
    description: state.taskDescription,
    firstPhaseId: phase?.id,
    firstPhaseName: phase?.name,
    firstPhaseEmoji: phase?.emoji,
    firstPhaseProfiles: phase === undefined ? undefined : (phase.availableProfiles?.join(", ") ?? "(none)"),
    workflowDescription: def.description,
    taskId: state.taskId,
    taskDescription: state.taskDescription,
  };
  return { ok: true, text: renderTemplate(template, vars, INITIAL_MESSAGE_VARS) };
}
