/**
 * What a run waits for at a phase's approve gate, for the inspector's approval form: the phase id (the name an
 * approval carries), its prompt and the JSON Schema of its payload, read from the definitions the inspector was
 * given (a pi run journals no `waiting` entry; `ctx.waitForApproval` does, with its schema).
 */
import { migrateState, resolveActive, type WorkflowRegistry } from "@phasekit/core";

/** The approve gate of the run's current phase; null when it has none or the definitions do not place the run. */
export interface ApproveGate {
  name: string;
  prompt: string;
  schema: Record<string, unknown> | null;
}

export function approveGateOf(registry: WorkflowRegistry | null, raw: unknown): ApproveGate | null {
  if (raw === undefined || registry === null) return null;
  const state = migrateState(raw);
  if (!state.ok) return null;
  const r = resolveActive(registry, state.state);
  const approve = r.ok ? r.active?.phase.gates?.approve : undefined;
  if (!r.ok || r.active === null || approve === undefined) return null;
  return { name: r.active.phase.id, prompt: approve.prompt, schema: (approve.schema as Record<string, unknown> | undefined) ?? null };
}
