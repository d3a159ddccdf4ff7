/** @phasekit/core: the pure rules of phasekit workflows. No I/O, no clock, no randomness. */

// Every exported function comes from the boundary, where none of them throws (see boundary.ts).
export {
  compileDefinitions,
  definitionProblemsError,
  migrateState,
  parseState,
  toPersisted,
  start,
  advance,
  loop,
  restartScope,
  route,
  carryPosition,
  cancel,
  cancelNow,
  pause,
  resume,
  fail,
  markCompletionNotified,
  reduce,
  resolveActive,
  checkTool,
  checkDefinitions,
  statusLine,
  contextPrompt,
  notDoneReminder,
  stepResultLine,
  phaseLabel,
  renderTemplate,
  completionMessage,
  cancelledMessage,
  failedMessage,
  endOfRunMessage,
  initialMessage,
  isCompiledRegistry,
  isSubworkflowRef,
  isBlocking,
  isWorkflowError,
  isLive,
  isFinished,
  workflowError,
  refusalToError,
  describeSchemaIssue,
} from "./api/boundary.js";
export type { TextOutcome } from "./api/boundary.js";
export { judgeControls, judgeBudget, judgeProgress, validateApproval } from "./api/controls.js";
export type { ControlFacts, ControlsJudgement } from "./api/controls.js";
export { BudgetsSchema, ProgressSchema, GatesSchema, VerifyGateSchema, ApproveGateSchema, OnExhaustedSchema, DEFAULT_PROGRESS } from "./definitions/controls-schema.js";
export type { Budgets, ProgressThresholds, Gates, OnExhausted } from "./definitions/controls-schema.js";
export { BUDGET_KEYS, NO_USAGE } from "./policy/controls.js";
export type { BudgetUsage, BudgetKey, BudgetVerdict, ActiveControls, ProgressCounters, ProgressVerdict, GateFacts, GateVerdict } from "./policy/controls.js";
export { WorkflowError } from "./errors/workflow-error.js";
export type { WorkflowErrorCode, WorkflowErrorDetails, Result } from "./errors/workflow-error.js";
export type { Refusal, Outcome } from "./errors/refusal.js";
export type { DeepReadonly } from "./errors/deep-readonly.js";

export {
  WorkflowDefinitionSchema,
  PhaseDefinitionSchema,
  SubworkflowRefSchema,
  PhaseEntrySchema,
  ToolRulesSchema,
  ProfileSchema,
  COMMAND_NAME_PATTERN,
  KEY_PATTERN,
} from "./definitions/schema.js";
export type {
  WorkflowDefinition,
  WorkflowDefinitionInput,
  PhaseDefinition,
  SubworkflowRef,
  PhaseEntry,
  ToolRules,
  Profile,
} from "./definitions/schema.js";
export { MAX_NESTING } from "./definitions/registry.js";
export type { WorkflowRegistry } from "./definitions/registry.js";
export type { CompileResult, CompileOptions, CompileCode } from "./definitions/compile.js";
export type { DefinitionProblem, DefinitionCode } from "./errors/problems.js";
export type { SchemaIssue, SchemaFailure } from "./errors/schema-issue.js";

export {
  WorkflowStateSchema,
  WorkflowStatusSchema,
  PathSegmentSchema,
  STATE_SCHEMA_VERSION,
} from "./state/schema.js";
export type { WorkflowState, WorkflowStatus, PathSegment } from "./state/schema.js";
export type { MigrateResult, MigrateCode, ParseResult } from "./state/migrate.js";
export { migrations } from "./state/migrations.js";
export type { Migration } from "./state/migrations.js";

export type {
  TransitionContext,
  TransitionOutcome,
  Happening,
  PhaseRef,
  WorkflowEvent,
  AdvanceCase,
  GateOutcome,
  StartInput,
  RefusalCode,
  RefusalCodes,
  CommonCode,
  PathCode,
} from "./transitions/types.js";

export type { ActiveWorkflow, BreadcrumbItem, ResolveCode } from "./transitions/resolve-active.js";
export type { PromptExtras } from "./present/prompt-vars.js";
export type { ToolDecision } from "./policy/check-tool.js";
export type { DefinitionsVerdict, DefinitionsChoice, WorkflowChange, PhaseChange } from "./policy/check-definitions.js";
export {
  PROMPT_VARS,
  BLOCK_REASON_VARS,
  COMPLETION_VARS,
  CANCELLED_VARS,
  FAILED_VARS,
  NOT_DONE_VARS,
  INITIAL_MESSAGE_VARS,
  FIELD_VARS,
} from "./definitions/template.js";
export type { TemplateVars } from "./definitions/template.js";
export { LAST_PHASE_NOTE } from "./present/step-result.js";
export type { EndOfRunMessage, MessageCode } from "./present/messages.js";
export {
  DEFAULT_ROLE_INSTRUCTION,
  DEFAULT_ADVANCE_REMINDER,
  DEFAULT_LAST_PHASE_REMINDER,
  DEFAULT_BLOCK_REASON,
  DEFAULT_COMPLETION_MESSAGE,
  DEFAULT_CANCELLED_MESSAGE,
  DEFAULT_FAILED_MESSAGE,
  DEFAULT_NOT_DONE_REMINDER,
  WORKFLOW_STEP_TOOL,
} from "./present/text.js";
