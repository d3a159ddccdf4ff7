/**
 * End-of-run and not-done messages. Completed, cancelled and failed runs each have their own text; the
 * cancelled one comes from `cancelledMessage` (the seed reused `completionMessage` there).
 */
import type { WorkflowDefinition, WorkflowRegistry } from "../definitions/schema.js";
import { WorkflowError, type Result } from "../errors/workflow-error.js";
import { countConcretePhases, definitionAt } from "../transitions/navigation.js";
import { pickText, promptVars } from "./prompt-vars.js";
import type { ActiveWorkflow } from "../transitions/resolve-active.js";
import type { WorkflowState } from "../state/schema.js";
import { CANCELLED_VARS, COMPLETION_VARS, FAILED_VARS, INITIAL_MESSAGE_VARS, NOT_DONE_VARS, PROMPT_VARS, renderTemplate } from "./template.js";
import { DEFAULT_CANCELLED_MESSAGE, DEFAULT_COMPLETION_MESSAGE, DEFAULT_FAILED_MESSAGE, DEFAULT_NOT_DONE_REMINDER } from "./text.js";
import { statusError } from "../transitions/helpers.js";

/** Which end a run reached, with the text to show the user. */
export type EndOfRunMessage = { kind: "completed" | "cancelled" | "failed"; text: string };

function rootOf(state: WorkflowState, registry: WorkflowRegistry): WorkflowDefinition | WorkflowError {
  return definitionAt("messages", registry, state.workflowKey, 0);
}

/** The completion message (definition's `completionMessage` or the default). */
export function completionMessage(state: WorkflowState, registry: WorkflowRegistry): Result<{ text: string }> {
  const def = rootOf(state, registry);
  if (def instanceof WorkflowError) return { ok: false, error: def };
  const vars = { workflowName: def.name, taskDescription: state.taskDescription, taskId: state.taskId, phaseCount: countConcretePhases(registry, state.workflowKey) };
  return { ok: true, text: renderTemplate(def.completionMessage ?? DEFAULT_COMPLETION_MESSAGE, vars, COMPLETION_VARS) };
}

/** The cancelled message (definition's `cancelledMessage` or its own default — never the completion text). */
export function cancelledMessage(state: WorkflowState, registry: WorkflowRegistry): Result<{ text: string }> {
  const def = rootOf(state, registry);
  if (def instanceof WorkflowError) return { ok: false, error: def };
  const top = state.currentPath[state.currentPath.length - 1];
  const phase = top === undefined ? undefined : registry.workflows.get(top.workflowKey)?.phases[top.phaseIndex];
  const phaseName = phase !== undefined && "name" in phase ? phase.name : undefined;
  const vars = { workflowName: def.name, taskDescription: state.taskDescription, taskId: state.taskId, phaseName };
  return { ok: true, text: renderTemplate(def.cancelledMessage ?? DEFAULT_CANCELLED_MESSAGE, vars, CANCELLED_VARS) };
}

/** The failed message, with the recorded reason. */
export function failedMessage(state: WorkflowState, registry: WorkflowRegistry): Result<{ text: string }> {
  const def = rootOf(state, registry);
  if (def instanceof WorkflowError) return { ok: false, error: def };
  const vars = { workflowName: def.name, taskDescription: state.taskDescription, taskId: state.taskId, failureReason: state.failureReason ?? "unknown" };
  return { ok: true, text: renderTemplate(DEFAULT_FAILED_MESSAGE, vars, FAILED_VARS) };
}

/** The message for a finished run, chosen by its status; NOT_FINISHED while it is still live. */
export function endOfRunMessage(state: WorkflowState, registry: WorkflowRegistry): Result<EndOfRunMessage> {
  if (state.status === "running" || state.status === "paused") {
    return { ok: false, error: statusError("messages", state, "NOT_FINISHED", "completed, cancelled or failed") };
  }
  const kind = state.status;
  const r = kind === "completed" ? completionMessage(state, registry) : kind === "cancelled" ? cancelledMessage(state, registry) : failedMessage(state, registry);
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

/** The workflow's `initialMessage` rendered for this run, or null when the definition has none. */
export function initialMessage(state: WorkflowState, registry: WorkflowRegistry): Result<{ text: string | null }> {
  const def = rootOf(state, registry);
  if (def instanceof WorkflowError) return { ok: false, error: def };
  if (def.initialMessage === undefined) return { ok: true, text: null };
  const vars = { workflowName: def.name, workflowKey: state.workflowKey, description: def.description, taskId: state.taskId, taskDescription: state.taskDescription };
  return { ok: true, text: renderTemplate(def.initialMessage, vars, INITIAL_MESSAGE_VARS) };
}
