/** The variables shared by the context prompt, the not-done reminder and block reasons, built from a resolved run. */
import type { ToolRules } from "../definitions/schema.js";
import type { ActiveWorkflow } from "../transitions/resolve-active.js";
import type { TemplateVars } from "./template.js";
import { WORKFLOW_STEP_TOOL } from "./text.js";

type TextField = "roleInstruction" | "advanceReminder" | "blockReasonTemplate" | "notDoneReminder";

/** A definition text for the current phase: the innermost workflow on the path that sets it wins. */
export function pickText(active: ActiveWorkflow, field: TextField): string | undefined {
  for (let i = active.scopes.length - 1; i >= 0; i--) {
    const text = active.scopes[i]?.[field];
    if (text !== undefined) return text;
  }
  return undefined;
}

/** "a, b" for a blacklist; "all except: a, b" for a whitelist (everything else is blocked); "" without rules. */
export function blockedToolsList(tools: ToolRules | undefined): string {
  if (tools?.blacklist !== undefined) return tools.blacklist.join(", ");
  if (tools?.whitelist !== undefined) return `all except: ${[WORKFLOW_STEP_TOOL, ...tools.whitelist].join(", ")}`;
  return "";
}

/** `Release Pipeline > Code Review ▸ 🔍 Static Analysis`: the workflows along the path, then the phase. */
export function breadcrumbPath(active: ActiveWorkflow): string {
  const names = active.breadcrumb.map((item) => item.workflowName);
  const phase = active.phase.emoji === "" ? active.phase.name : `${active.phase.emoji} ${active.phase.name}`;
  return `${names.join(" > ")} ▸ ${phase}`;
}

/** The variables of the prompt templates (role instruction, instructions, advance reminder). */
export function promptVars(active: ActiveWorkflow): TemplateVars {
  const { state, definition, phase } = active;
  return {
    workflowName: definition.name,
    workflowKey: state.workflowKey,
    description: definition.description,
    taskId: state.taskId,
    phaseId: phase.id,
    phaseName: phase.name,
    previousPhaseName: active.previousPhase?.phaseName,
    nextPhaseName: active.nextPhase?.phaseName,
    blockedToolsList: blockedToolsList(phase.tools),
    toolName: WORKFLOW_STEP_TOOL,
    breadcrumbPath: breadcrumbPath(active),
    globalStepCount: state.globalStepCount,
  };
}
