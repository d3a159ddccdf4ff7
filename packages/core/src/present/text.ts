/**
 * The default texts, used when a definition leaves a field out. Written from the seed's descriptions; the
 * cancelled text has its own field (`cancelledMessage`), where the seed reused `completionMessage`.
 */

/** Default role instruction of the context prompt. */
export const DEFAULT_ROLE_INSTRUCTION =
  "You are the ORCHESTRATOR for this workflow. You must NOT use the edit or write tools directly. " +
  "All implementation work must be delegated to subagents via the delegate_to_subagents tool. " +
  "Follow the phase instructions precisely.";

/** Default reminder, at the end of the context prompt, to call workflow_step. */
export const DEFAULT_ADVANCE_REMINDER =
  "When you finish this phase, call the workflow_step tool with action='next' to advance to the next phase. " +
  "If you need to restart the current scope from the beginning, use action='loop'.";

/** Default reminder on the last phase, where there is no next phase to advance to (phasekit's words). */
export const DEFAULT_LAST_PHASE_REMINDER =
  "This is the last phase: when this phase is finished, call the workflow_step tool with action='next'; the workflow ends only then. " +
  "If you need to restart the current scope from the beginning, use action='loop'.";

/** Default reason given when a phase's tool rules block a tool. */
export const DEFAULT_BLOCK_REASON = [
  '[workflow] The tool "{toolName}" is blocked during the {phaseName} phase.',
  "Refer to the current phase instructions for allowed tools and approaches.",
  "When finished, call workflow_step to advance to the next phase.",
].join("\n");

/** Default message when a run completes. */
export const DEFAULT_COMPLETION_MESSAGE = [
  "✅ **{workflowName} Complete**",
  "",
  "**Task:** {taskDescription}",
  "**Task ID:** {taskId}",
  "**Phases completed:** {phaseCount}",
].join("\n");

/** Default message when a run is cancelled. */
export const DEFAULT_CANCELLED_MESSAGE = ["❌ **{workflowName} Cancelled**", "", "**Task:** {taskDescription}", "**Task ID:** {taskId}"].join("\n");

/** Default message when a run fails (phasekit addition: the seed had no failed status). */
export const DEFAULT_FAILED_MESSAGE = [
  "❌ **{workflowName} Failed**",
  "",
  "**Task:** {taskDescription}",
  "**Task ID:** {taskId}",
  "**Reason:** {failureReason}",
].join("\n");

/** Default reminder when the agent stops while the run is still active. */
export const DEFAULT_NOT_DONE_REMINDER = [
  "⚠️ The {workflowName} is still active. Current phase: {phaseEmoji} {phaseName}.",
  "",
  "You must NOT stop yet. The workflow requires you to complete the current phase",
  "and call workflow_step to advance.",
  "",
  "Current phase instructions:",
  "{phaseInstructions}",
  "",
  "Continue working on the current phase and call workflow_step when done.",
].join("\n");

/** The tool that moves a workflow; never blocked by tool rules. */
export const WORKFLOW_STEP_TOOL = "workflow_step";
