/** Which run statuses are final, shared by the run lifecycle and the stores' control-request rules. */
import { workflowError, type WorkflowError } from "@phasekit/core";

/** Statuses that end a run for good: re-entered only with `reenter: true`; pause and stop are refused. */
export const FINISHED_STATUSES: ReadonlySet<string> = new Set(["completed", "cancelled"]);

/** RUN_FINISHED for a run in a final state, naming what was refused. */
export function finishedError(slug: string, status: string, refused: string, hint: string): WorkflowError {
  return workflowError("run", "RUN_FINISHED", `run ${slug} is ${status}; ${refused} is refused.`, { value: status, field: "status", hint });
}
