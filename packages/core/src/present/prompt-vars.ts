/** The variables shared by the context prompt, the not-done reminder and block reasons, built from a resolved run. */
import type { ToolRules } from "../definitions/schema.js";
import type { ActiveWorkflow } from "../transitions/resolve-active.js";
import type { TemplateVars } from "../definitions/template.js";
import { WORKFLOW_STEP_TOOL } from "./text.js";

type TextField = "roleInstruction" | "advanceReminder" | "blockReasonTemplate" | "notDoneReminder";

/** A definition text for the current phase: the innermost workflow on the path that sets it wins. */
export function pickText(active: Pick<ActiveWorkflow, "scopes">, field: TextField): string | undefined {
  for (let i = active.scopes.length - 1; i >= 0; i--) {
    const text = active.scopes[i]?.[field];
    if (text !== undefined) return text;
  }
  return undefined;
}

/**
 * "a, b" for a blacklist, "(none)" when nothing is blocked (pi-workflows' words). A whitelist blocks everything
 * else: "all except: workflow_step, a" (pi-workflows says "(none)" there, which is not true).
 */
export function blockedToolsList(tools: ToolRules | undefined): string {
  if (tools?.whitelist !== undefined) return `all except: ${[WORKFLOW_STEP_TOOL, ...tools.whitelist].join(", ")}`;
  const blocked = tools?.blacklist ?? [];
  return blocked.length === 0 ? "(none)" : blocked.join(", ");
}

/** `Release Pipeline > Code Review ▸ 🔍 Static Analysis`: the workflows along the path, then the phase. */
export function breadcrumbPath(active: ActiveWorkflow): string {
  const names = active.breadcrumb.map((item) => item.workflowName);
  const phase = active.phase.emoji === "" ? active.phase.name : `${active.phase.emoji} ${active.phase.name}`;
  return `${names.join(" > ")} ▸ ${phase}`;
}

/**
 * The variables of the prompt templates (role instruction, instructions, advance reminder), with pi-workflows'
 * meanings: `{description}` is the user's task, `{previousPhaseName}` is "(start)" on the first phase and
 * `{nextPhaseName}` "DONE" on the last, `{breadcrumbPath}` the workflows entered ("Release > Review"). Previous
 * and next are the concrete phases around this one at any depth (pi-workflows reads them from the root's list).
 */
export function promptVars(active: ActiveWorkflow, extras?: PromptExtras): TemplateVars {
  const { state, definition, phase } = active;
  return {
    workflowName: definition.name,
    workflowKey: state.workflowKey,
    description: state.taskDescription,
    workflowDescription: definition.description,
    taskDescription: state.taskDescription,
    taskId: state.taskId,
    phaseId: phase.id,
    phaseName: phase.name,
    previousPhaseName: active.previousPhase?.phaseName ?? "(start)",
    nextPhaseName: active.nextPhase?.phaseName ?? "DONE",
    blockedToolsList: blockedToolsList(phase.tools),
    toolName: WORKFLOW_STEP_TOOL,
    breadcrumbPath: active.breadcrumb.filter((b) => b.entered).map((b) => b.workflowName).join(" > "),
    globalStepCount: state.globalStepCount,
    approval: extras?.approval === undefined ? "(none)" : JSON.stringify(extras.approval),
  };
}

/** What an adapter knows that the state does not hold: the payload of the last approval the run passed. */
export interface PromptExtras {
  readonly approval?: unknown;
}
