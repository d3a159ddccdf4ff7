/** The store's outcome shape: a thrown WorkflowError becomes `{ ok: false, error }`; anything else still throws. */
import { isWorkflowError, type WorkflowError } from "@phasekit/core";

export async function settle<T extends { ok: boolean }>(fn: () => Promise<T | { ok: false; error: WorkflowError }>): Promise<T | { ok: false; error: WorkflowError }> {
  try {
    return await fn();
  } catch (error) {
    if (isWorkflowError(error)) return { ok: false, error };
    throw error;
  }
}
