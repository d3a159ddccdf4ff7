/**
 * Per-phase tool rules. `workflow_step` is always allowed (the agent must always be able to move on, and a
 * cancel is how a broken run ends). Without a running run everything is allowed. A run whose path does not
 * resolve is a refusal (`ok: false`, the walker's code), never a silent allow: adapters block the tool with the
 * refusal's message (fail closed), since `advance` and `loop` refuse that run as well. A blacklist blocks its
 * tools; a whitelist blocks every other tool, so an empty whitelist allows only `workflow_step`.
 */
import type { ToolRules } from "../definitions/schema.js";
import type { WorkflowRegistry } from "../definitions/registry.js";
import { refusal, type Outcome } from "../errors/refusal.js";
import type { ResolveCode } from "../transitions/resolve-active.js";
import { isCompiledRegistry } from "../definitions/registry.js";
import { argumentError } from "../transitions/apply.js";
import { pickText } from "../present/prompt-vars.js";
import { resolveActive } from "../transitions/resolve-active.js";
import type { WorkflowState } from "../state/schema.js";
import { BLOCK_REASON_VARS, renderTemplate } from "../present/template.js";
import { DEFAULT_BLOCK_REASON, WORKFLOW_STEP_TOOL } from "../present/text.js";

/** Whether a tool may run now, with the reason to show the agent when it may not; a refusal for a broken run. */
export type ToolDecision = Outcome<{ readonly allowed: true } | { readonly allowed: false; readonly reason: string }, ResolveCode>;

const ALLOWED: ToolDecision = Object.freeze({ ok: true, allowed: true });

/** Decides whether `toolName` may run in the current phase of `state` (null: no run). */
export function checkTool(registry: WorkflowRegistry, state: WorkflowState | null, toolName: string): ToolDecision {
  const bad = isCompiledRegistry(registry) ? undefined : argumentError("tool", registry, { now: 0 });
  if (bad !== undefined) return { ok: false, error: bad };
  if (typeof toolName !== "string") {
    return { ok: false, error: refusal("tool", "INVALID_OPTIONS", `toolName must be a string, got ${typeof toolName}.`, { field: "toolName", hint: "Call checkTool(registry, state, toolName)." }) };
  }
  if (state !== null && (typeof state !== "object" || !("currentPath" in state))) {
    return { ok: false, error: refusal("tool", "INVALID_OPTIONS", "state must be a workflow state or null.", { field: "state", hint: "Call checkTool(registry, state, toolName)." }) };
  }
  const early = toolName === WORKFLOW_STEP_TOOL || state === null || state.status !== "running";
  const resolved = resolveActive(registry, early ? IDLE : state);
  if (!resolved.ok) return resolved;
  if (early || resolved.active === null) return ALLOWED;
  const { active } = resolved;
  const tools = active.phase.tools;
  if (!isBlocked(tools, toolName)) return ALLOWED;
  const template = pickText(active, "blockReasonTemplate") ?? DEFAULT_BLOCK_REASON;
  const vars = { workflowName: active.definition.name, phaseName: active.phase.name, toolName, allowedTools: allowedTools(tools) };
  return { ok: true, allowed: false, reason: renderTemplate(template, vars, BLOCK_REASON_VARS) };
}

// A finished stand-in for "no run", so the registry check still runs for a null state.
const IDLE = { status: "completed" } as WorkflowState;

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
