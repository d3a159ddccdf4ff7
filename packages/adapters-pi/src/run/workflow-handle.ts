/**
 * The core workflow a run carries. Events go through core's `reduce`; every dispatch is an entry of the run's one
 * history (dispatch-record.ts), so a resumed body replays its dispatches by occurrence: a dispatch that already
 * happened returns its recorded outcome and does not move the workflow again, and while the body replays,
 * `state()` is the state it had at that point. A live dispatch persists its new state before it returns. An armed
 * cancel is never written to workflow.json (`toPersisted`); the history keeps it, because the body saw it.
 */
import { reduce, resolveActive, statusLine, workflowError } from "@phasekit/core";
import { persisted } from "./persisted.js";
import type { TransitionOutcome, WorkflowEvent, WorkflowRegistry, WorkflowState } from "@phasekit/core";
import type { JsonValue } from "../io/plain-json.js";
import { fingerprint } from "../engine/fingerprint.js";
import { currentStep } from "./step-scope.js";
import { decodeOutcome, decodeState, dispatchInput, dispatchKey, encodeOutcome, toJson, WORKFLOW_BASE_KEY } from "./dispatch-record.js";

/** The core workflow a run carries: its state, and `dispatch` to move it (persisted before it returns). */
export interface RunWorkflowHandle {
  readonly registry: WorkflowRegistry;
  /** The current state, in memory (it may hold an armed cancel, which is never written). */
  state(): WorkflowState;
  /**
   * Applies a core event. The nth dispatch of a resumed body returns what the nth dispatch returned before (when
   * it was the same event on the same state) without moving the workflow again; a new one is written to
   * workflow.json and the history before it returns.
   */
  dispatch(event: WorkflowEvent): Promise<TransitionOutcome>;
  /** The status line of the current phase (empty when the run is over). */
  statusLine(): string;
}

/** The run's history as the handle uses it: one fenced entry per key, reused when its input is unchanged. */
export interface HistoryEntries {
  /** Where the history lives (named in errors). */
  readonly file: string;
  entry(key: string, input: JsonValue, fn: () => Promise<JsonValue>): Promise<{ reused: boolean; output: unknown }>;
  /** Whether the history holds an entry `key` (one index lookup; no history is read in full). */
  has(key: string): Promise<boolean>;
}

/** How the handle persists: write the state (and the phase it sits on), and journal what happened. */
export interface WorkflowHandlePorts {
  history: HistoryEntries;
  persist(state: WorkflowState, phase: string | undefined): Promise<void>;
  journal(event: string, data: unknown): Promise<void>;
  now(): number;
}

/** The handle plus what the run context needs to show a replaying body the run as it was. */
export interface WorkflowHandleInternals {
  handle: RunWorkflowHandle;
  /** True while the body is replaying recorded dispatches (its view of the run lags the stored one). */
  replaying(): boolean;
}

/** The id of the phase a core state sits on (undefined once it has finished or cannot be resolved). */
export function phaseOf(state: WorkflowState, registry: WorkflowRegistry): string | undefined {
  const active = resolveActive(registry, state);
  return active.ok ? active.active?.phase.id : undefined;
}

/**
 * Opens the handle: `initial` (already started or migrated by the lifecycle) is the body's starting state the
 * first time; afterwards the recorded starting state is, so a replay begins where the first run began.
 */
export async function openWorkflowHandle(registry: WorkflowRegistry, initial: WorkflowState, ports: WorkflowHandlePorts): Promise<WorkflowHandleInternals> {
  const { history } = ports;
  const base = await history.entry(WORKFLOW_BASE_KEY, null, async () => toJson(initial));
  let made = 0;
  // Live once the body has made a dispatch the history does not hold (or one that differs from it).
  let live = !(await history.has(dispatchKey(1)));
  // Replaying, the body sees the state as it was; past the recorded dispatches it sees the run as it is now:
  // `initial` holds the lifecycle's moves since the last recorded dispatch (a pause, the resume at start, a
  // stop's cancel), which are not dispatches of the body and would otherwise be lost (and the state's
  // generation would step back).
  const recorded = base.reused ? decodeState(WORKFLOW_BASE_KEY, history.file, base.output) : initial;
  let current = live && initial.generation > recorded.generation ? initial : recorded;
  // Dispatches apply one at a time, in call order: the nth sees the state the (n-1)th left.
  let queue: Promise<unknown> = Promise.resolve();

  const apply = async (n: number, event: WorkflowEvent): Promise<TransitionOutcome> => {
    const key = dispatchKey(n);
    const from = current;
    let fresh: TransitionOutcome | undefined;
    const r = await history.entry(key, dispatchInput(event, fingerprint(toJson(from))), async () => {
      // A body that diverged from its history moves on from the replayed state, never behind the run's generation.
      const base = from.generation < initial.generation ? { ...from, generation: initial.generation } : from;
      fresh = reduce(registry, base, event, { now: ports.now() });
      if (fresh.ok && fresh.happened.type !== "cancel-armed") {
        await ports.persist(persisted(fresh.state), phaseOf(fresh.state, registry));
        await ports.journal(`workflow:${fresh.happened.type}`, toJson(fresh.happened));
      }
      return encodeOutcome(fresh);
    });
    const outcome = fresh ?? decodeOutcome(key, history.file, r.output);
    if (outcome.ok) current = outcome.state;
    // Off the recorded dispatches (a different event or state): live from here on, from this state.
    if (!r.reused) live = true;
    else if (!(await history.has(dispatchKey(n + 1)))) {
      // The last recorded dispatch, replayed: the body catches up with the run as it is now, if the lifecycle
      // moved it since (a move bumps the generation; an armed cancel, never written, stays armed).
      live = true;
      if (initial.generation > current.generation) current = initial;
    }
    return outcome;
  };

  const handle: RunWorkflowHandle = {
    registry,
    state: () => current,
    dispatch(event) {
      const inside = currentStep();
      if (inside !== undefined) return Promise.reject(dispatchInStep(inside, event));
      const n = ++made;
      const run = queue.then(() => apply(n, event));
      queue = run.catch(() => undefined);
      return run;
    },
    statusLine() {
      const active = resolveActive(registry, current);
      if (!active.ok || active.active === null) return "";
      const line = statusLine(active.active);
      return line.ok ? line.text : "";
    },
  };
  return { handle, replaying: () => !live };
}

function dispatchInStep(key: string, event: WorkflowEvent): Error {
  return workflowError("run", "INVALID_STATE", `ctx.workflow.dispatch({ type: "${event.type}" }) was called inside the function of step ${key}: a reused step does not run its function, so the dispatch would not replay.`, {
    stepId: key,
    value: event.type,
    hint: "return from the step, then dispatch in the body (await ctx.step(...); await ctx.workflow.dispatch(...))",
  });
}
