/** `@phasekit/adapters-pi/pi`: the pi extension and the parts it is made of, for composing into other extensions. */
export { createWorkflowExtension } from "./extension.js";
export { default as phasekitWorkflows } from "./default-extension.js";
export { createRuntime, MESSAGE, UI_KEY } from "./runtime.js";
export type { Runtime, WorkflowExtensionOptions } from "./runtime.js";
export { registerHooks, runEndOf } from "./hooks.js";
export { createContinuation } from "./continuation.js";
export type { Continuation, RunEnd } from "./continuation.js";
export { createStepTool, STEP_TOOL, STEP_PARAMETERS } from "./step-tool.js";
export { createCommands } from "./commands.js";
export { registerRenderers, linesComponent } from "./renderers.js";
export { loadDefinitionFolders, defaultDefinitionRoots } from "./definition-folders.js";
export type { LoadedDefinitions, DefinitionLoadProblem, DefinitionRoots } from "./definition-folders.js";
export { rebuildState, summariesOf, STATE_ENTRY, SUMMARY_ENTRY } from "./session-entries.js";
export type { RebuiltState, PhaseSummary } from "./session-entries.js";
export { createDurableRuns } from "./durable-runs.js";
export type { DurableRuns, DurableOptions } from "./durable-runs.js";
export { phaseListWidget } from "./widget.js";
export type * from "./host.js";
