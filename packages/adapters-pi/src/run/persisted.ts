/**
 * The state to write, for the adapters: core's `toPersisted` is an outcome (a wrong argument is refused, never
 * thrown), and every state the adapters write is one core just made or migrated, so a refusal here is a bug in
 * the wiring: it is thrown as the WorkflowError it is, never written.
 */
import { refusalToError, toPersisted, type WorkflowState } from "@phasekit/core";

/** `toPersisted(state).state`, or the refusal thrown. */
export function persisted(state: WorkflowState): WorkflowState {
  const r = toPersisted(state);
  if (!r.ok) throw refusalToError(r.error);
  return r.state;
}
