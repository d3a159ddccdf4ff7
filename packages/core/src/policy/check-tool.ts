/**
 * Per-phase tool rules. `workflow_step` is always allowed (the agent must always be able to move on, and a
 * cancel is how a broken run ends). Without a running run everything is allowed. A run whose path does not
 * resolve is a refusal (`ok: false`, the walker's code), never a silent allow: adapters block the tool with the
 * refusal's message (fail closed), since `advance` and `loop` refuse that run as well. A blacklist blocks its
 * tools; a whitelist blocks every other tool, so an empty whitelist allows only `workflow_step`.
 *
 * This runs on every tool call, so it reads only what it needs: the walked path and the one phase's tool list
 * (a reference the state rests on is descended like everywhere else); no ActiveWorkflow is built unless the
 * tool is blocked and the reason has to be written.
 */
import type { ToolRules } from "../definitions/schema.js";
import type { WorkflowRegistry } from "../definitions/registry.js";
import type { Outcome } from "../errors/refusal.js";
import type { ResolveCode } from "../transitions/resolve-active.js";
import { optionError, registryError, stateOrNullError } from "../transitions/arguments.js";
import { descend, walkPath, type Level } from "../transitions/navigation.js";
import { pickText } from "../present/prompt-vars.js";
import type { WorkflowState } from "../state/schema.js";
import { BLOCK_REASON_VARS, renderTemplate } from "../definitions/template.js";
import { DEFAULT_BLOCK_REASON, WORKFLOW_STEP_TOOL } from "../present/text.js";

/** Whether a tool may run now, with the reason to show the agent when it may not; a refusal for a broken run. */
export type ToolDecision = Outcome<{ readonly allowed: true } | { readonly allowed: false; readonly reason: string }, ResolveCode>;

const ALLOWED: ToolDecision = Object.freeze({ ok: true, allowed: true });
const SCOPE = "tool";

/** Decides whether `toolName` may run in the current phase of `state` (null: no run). */
export function checkTool(registry: WorkflowRegistry, state: WorkflowState | null, toolName: string): ToolDecision {
  const bad =
    registryError(SCOPE, registry) ??
    (typeof toolName === "string" ? undefined : optionError(SCOPE, "toolName", "must be a string", toolName, "Call checkTool(registry, state, toolName).")) ??
    stateOrNullError(SCOPE, state);
  if (bad !== undefined) return { ok: false, error: bad };
  if (toolName === WORKFLOW_STEP_TOOL || state === null || state.status !== "running") return ALLOWED;
  const walked = walkPath(SCOPE, registry, state);
  if (!walked.ok) return walked;
  const levels = walked.levels;
  const top = levels[levels.length - 1] as Level;
  let phase = top.entry;
  if ("subworkflow" in phase) {
    // A migrated state resting on a reference: its phase is the reference's first concrete one.
    const r = descend(SCOPE, registry, phase, top.key, levels.length - 1, "first", (l) => levels.push(l));
    if (!r.ok) return r;
    phase = r.phase;
  }
  const tools = phase.tools;
  if (!isBlocked(tools, toolName)) return ALLOWED;
  const template = pickText({ scopes: levels.map((l) => l.def) }, "blockReasonTemplate") ?? DEFAULT_BLOCK_REASON;
  const vars = { workflowName: (levels[0] as Level).def.name, phaseName: phase.name, toolName, allowedTools: allowedTools(tools) };
  return { ok: true, allowed: false, reason: renderTemplate(template, vars, BLOCK_REASON_VARS) };
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
