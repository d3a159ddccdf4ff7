/** @phasekit/core: the pure rules of phasekit workflows. No I/O, no clock, no randomness. */
export { WorkflowError, isWorkflowError, workflowError } from "./errors.js";
export type { WorkflowErrorCode, WorkflowErrorDetails, Result } from "./errors.js";

export {
  WorkflowDefinitionSchema,
  PhaseDefinitionSchema,
  SubworkflowRefSchema,
  PhaseEntrySchema,
  ToolRulesSchema,
  ProfileSchema,
  COMMAND_NAME_PATTERN,
  KEY_PATTERN,
  isSubworkflowRef,
} from "./definition-schema.js";
export type {
  WorkflowDefinition,
  WorkflowDefinitionInput,
  PhaseDefinition,
  SubworkflowRef,
  PhaseEntry,
  ToolRules,
  Profile,
  WorkflowRegistry,
} from "./definition-schema.js";
export { compileDefinitions, definitionProblemsError } from "./compile-definitions.js";
export type { CompileResult } from "./compile-definitions.js";
export type { DefinitionProblem } from "./definition-problems.js";

export {
  WorkflowStateSchema,
  WorkflowStatusSchema,
  PathSegmentSchema,
  STATE_SCHEMA_VERSION,
  toPersisted,
  isLive,
  isFinished,
} from "./state-schema.js";
export type { WorkflowState, WorkflowStatus, PathSegment } from "./state-schema.js";
export { migrateState, parseState } from "./migrate-state.js";
export type { MigrateResult } from "./migrate-state.js";

export type { TransitionContext, TransitionOutcome, Happening, PhaseRef, WorkflowEvent, AdvanceCase } from "./transition-types.js";
export { start } from "./start.js";
export type { StartInput, StartOutcome } from "./start.js";
export { advance } from "./advance.js";
export { loop } from "./loop.js";
export { cancel, cancelNow } from "./cancel.js";
export { pause, resume, fail, markCompletionNotified } from "./lifecycle.js";
export { reduce } from "./reduce.js";

export { resolveActive } from "./resolve-active.js";
export type { ActiveWorkflow, BreadcrumbItem } from "./resolve-active.js";
export { checkTool } from "./tool-policy.js";
export type { ToolDecision } from "./tool-policy.js";
export { renderTemplate } from "./template.js";
export type { TemplateVars } from "./template.js";
export { statusLine } from "./status-line.js";
export { contextPrompt } from "./context-prompt.js";
export {
  completionMessage,
  cancelledMessage,
  failedMessage,
  endOfRunMessage,
  notDoneReminder,
  initialMessage,
} from "./messages.js";
export type { EndOfRunMessage } from "./messages.js";
export {
  DEFAULT_ROLE_INSTRUCTION,
  DEFAULT_ADVANCE_REMINDER,
  DEFAULT_BLOCK_REASON,
  DEFAULT_COMPLETION_MESSAGE,
  DEFAULT_CANCELLED_MESSAGE,
  DEFAULT_FAILED_MESSAGE,
  DEFAULT_NOT_DONE_REMINDER,
  WORKFLOW_STEP_TOOL,
} from "./text.js";
