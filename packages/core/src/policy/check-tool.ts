/**
 * Per-phase tool rules. `workflow_step` is always allowed (the agent must always be able to move on); without
 * a running run, or when the run's path does not resolve, everything is allowed (fail open: a broken state
 * must not lock the agent out of its tools). A blacklist blocks its tools; a whitelist blocks every other
 * tool, so an empty whitelist allows only `workflow_step`.
 */
import type { ToolRules, WorkflowRegistry } from "../definitions/schema.js";
import { pickText } from "../present/prompt-vars.js";
import { resolveActive } from "../transitions/resolve-active.js";
import type { WorkflowState } from "../state/schema.js";
import { BLOCK_REASON_VARS, renderTemplate } from "../present/template.js";
import { DEFAULT_BLOCK_REASON, WORKFLOW_STEP_TOOL } from "../present/text.js";

/** Whether a tool may run now, with the reason to show the agent when it may not. */
export type ToolDecision = { readonly allowed: true } | { readonly allowed: false; readonly reason: string };

const ALLOWED: ToolDecision = Object.freeze({ allowed: true });

/** Decides whether `toolName` may run in the current phase of `state` (null/undefined: no run). */
export function checkTool(state: WorkflowState | null | undefined, registry: WorkflowRegistry, toolName: string): ToolDecision {
  if (toolName === WORKFLOW_STEP_TOOL || state == null || state.status !== "running") return ALLOWED;
  const resolved = resolveActive(state, registry);
  if (!resolved.ok) return ALLOWED;
  const { active } = resolved;
  const tools = active.phase.tools;
  if (!isBlocked(tools, toolName)) return ALLOWED;
  const template = pickText(active, "blockReasonTemplate") ?? DEFAULT_BLOCK_REASON;
  const vars = { workflowName: active.definition.name, phaseName: active.phase.name, toolName, allowedTools: allowedTools(tools) };
  return { allowed: false, reason: renderTemplate(template, vars, BLOCK_REASON_VARS) };
}

function isBlocked(tools: ToolRules | undefined, toolName: string): boolean {
  if (tools?.blacklist !== undefined) return tools.blacklist.includes(toolName);
  if (tools?.whitelist !== undefined) return !tools.whitelist.includes(toolName);
  return false;
}

/** `{allowedTools}`: the whitelist, or `all except: …` for a blacklist (workflow_step is implied in both). */
function allowedTools(tools: ToolRules | undefined): string {
  if (tools?.blacklist !== undefined) return `all except: ${tools.blacklist.join(", ")}`;
  const list = tools?.whitelist ?? [];
  return list.length === 0 ? `none (only ${WORKFLOW_STEP_TOOL})` : list.join(", ");
}
