/**
 * The core workflow a run carries. Events go through core's `reduce`; the adapter persists the outcome before
 * returning it. An armed cancel lives only in memory: the persisted copy is always `toPersisted(state)`, so a
 * crash or a later run never finds a half-confirmed cancel.
 */
import { reduce, resolveActive, statusLine, toPersisted } from "@phasekit/core";
import type { TransitionOutcome, WorkflowEvent, WorkflowRegistry, WorkflowState } from "@phasekit/core";

/** The core workflow a run carries: its state, and `dispatch` to move it (persisted before it returns). */
export interface RunWorkflowHandle {
  readonly registry: WorkflowRegistry;
  /** The current state, in memory (it may hold an armed cancel, which is never written). */
  state(): WorkflowState;
  /** Applies a core event; a success is written to workflow.json (and journaled) before it returns. */
  dispatch(event: WorkflowEvent): Promise<TransitionOutcome>;
  /** The status line of the current phase (empty when the run is over). */
  statusLine(): string;
}

/** How the handle persists: write the state (and the phase it sits on), and journal what happened. */
export interface WorkflowHandlePorts {
  persist(state: WorkflowState, phase: string | undefined): Promise<void>;
  journal(event: string, data: unknown): Promise<void>;
  now(): number;
}

/** The id of the phase a core state sits on (undefined once it has finished or cannot be resolved). */
export function phaseOf(state: WorkflowState, registry: WorkflowRegistry): string | undefined {
  const active = resolveActive(registry, state);
  return active.ok ? active.active?.phase.id : undefined;
}

/** Creates the handle over `initial` (already migrated and validated). */
export function createWorkflowHandle(registry: WorkflowRegistry, initial: WorkflowState, ports: WorkflowHandlePorts): RunWorkflowHandle {
  let current = initial;
  return {
    registry,
    state: () => current,
    async dispatch(event) {
      const outcome = reduce(registry, current, event, { now: ports.now() });
      // A refusal changes nothing; arming a cancel lives in memory only and is never persisted.
      if (!outcome.ok) return outcome;
      if (outcome.happened.type === "cancel-armed") {
        current = outcome.state;
        return outcome;
      }
      await ports.persist(toPersisted(outcome.state), phaseOf(outcome.state, registry));
      current = outcome.state;
      await ports.journal(`workflow:${outcome.happened.type}`, outcome.happened);
      return outcome;
    },
    statusLine() {
      const active = resolveActive(registry, current);
      return active.ok && active.active !== null ? statusLine(active.active) : "";
    },
  };
}
