export { WorkflowError, isWorkflowError, workflowError } from "./errors.js";
export type { WorkflowErrorCode, WorkflowErrorDetails, Result } from "./errors.js";
