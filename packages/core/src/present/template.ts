/**
 * Single-pass templates: `{name}` is replaced only when `name` is in the template's allowlist and has a value;
 * anything else stays as written. Substituted text is never scanned again, so a task description that
 * contains `{taskId}` stays literal (the seed expanded values a second time).
 */

/** Values a template may use; `undefined` means "no value" (the placeholder stays). */
export type TemplateVars = Readonly<Record<string, string | number | undefined>>;

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Renders `template` in one pass over the original text. */
export function renderTemplate(template: string, vars: TemplateVars, allowlist: ReadonlySet<string>): string {
  return template.replace(PLACEHOLDER, (whole: string, name: string) => {
    if (!allowlist.has(name) || !Object.hasOwn(vars, name)) return whole;
    const value = vars[name];
    return value === undefined ? whole : String(value);
  });
}

/** Variables of the role instruction, phase instructions and advance reminder. */
export const PROMPT_VARS: ReadonlySet<string> = new Set([
  "workflowName",
  "workflowKey",
  "description",
  "taskId",
  "phaseId",
  "phaseName",
  "previousPhaseName",
  "nextPhaseName",
  "blockedToolsList",
  "toolName",
  "breadcrumbPath",
  "globalStepCount",
]);

/** Variables of a blocked tool's reason. */
export const BLOCK_REASON_VARS: ReadonlySet<string> = new Set(["workflowName", "phaseName", "toolName", "allowedTools"]);

/** Variables of the completion message. */
export const COMPLETION_VARS: ReadonlySet<string> = new Set(["workflowName", "taskDescription", "taskId", "phaseCount"]);

/** Variables of the cancelled message. */
export const CANCELLED_VARS: ReadonlySet<string> = new Set(["workflowName", "taskDescription", "taskId", "phaseName"]);

/** Variables of the failed message (no definition field: phasekit's own text). */
export const FAILED_VARS: ReadonlySet<string> = new Set(["workflowName", "taskDescription", "taskId", "failureReason"]);

/** Variables of the not-done reminder. */
export const NOT_DONE_VARS: ReadonlySet<string> = new Set([
  "workflowName",
  "phaseName",
  "phaseEmoji",
  "phaseInstructions",
  "taskDescription",
  "taskId",
  "workflowKey",
]);

/** Variables of a workflow's initial message (sent when it starts). */
export const INITIAL_MESSAGE_VARS: ReadonlySet<string> = new Set(["workflowName", "workflowKey", "description", "taskId", "taskDescription"]);
