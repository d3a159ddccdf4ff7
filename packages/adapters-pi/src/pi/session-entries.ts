/**
 * The workflow's session entries. State is appended as `workflow:state` (pi-workflows' entry type, so its
 * sessions are picked up and migrated by core); the newest valid one on the branch is the state. Summaries
 * given to `workflow_step` are their own `workflow:summary` entries, read only when `status` asks.
 */
import { readState, type WorkflowError, type WorkflowState } from "./core-bridge.js";
import type { BranchEntry } from "./host.js";

/** The custom entry type of persisted state (shared with pi-workflows 1.0.0). */
export const STATE_ENTRY = "workflow:state";
/** The custom entry type of phase summaries. */
export const SUMMARY_ENTRY = "workflow:summary";

/** What the branch says about the workflow. `skipped` names newer entries that were unreadable. */
export interface RebuiltState {
  readonly state: WorkflowState | null;
  readonly skipped: readonly { index: number; error: WorkflowError }[];
}

type ReadResult = ReturnType<typeof readState>;

// pi keeps entry objects for the session's lifetime, so a tree move or reload reads the same data again: parse
// (migrate + validate) each entry's data once.
const parsed = new WeakMap<object, ReadResult>();

function readEntry(data: unknown): ReadResult {
  if (typeof data !== "object" || data === null) return readState(data);
  let r = parsed.get(data);
  if (r === undefined) {
    r = readState(data);
    parsed.set(data, r);
  }
  return r;
}

/**
 * Remembers that `data`, the entry this process just appended, reads back as `state`: pi keeps the very object
 * it was given, so the next rebuild (a tree move, a session change) finds the newest entry parsed already instead
 * of running core's migration on it. `state` must be the state `data` was persisted from (`toPersisted` of it).
 */
export function rememberWritten(data: object, state: WorkflowState): void {
  // What migrateState gives back for a persisted state: the same fields, the cancel disarmed.
  parsed.set(data, { ok: true, state: state.cancelPending ? { ...state, cancelPending: false } : state });
}

/**
 * Index of the newest `workflow:state` entry at or before `from`, or -1. A small loop of its own so the engine
 * optimises it alone: it is the whole cost of a rebuild on a long branch. `type` is checked first: every entry
 * has it, while most lack `customType` (a missing property is a slow lookup).
 */
function previousStateEntry(branch: readonly BranchEntry[], from: number): number {
  for (let i = from; i >= 0; i--) {
    const e = branch[i] as BranchEntry;
    if (e.type === "custom" && e.customType === "workflow:state") return i;
  }
  return -1;
}

/** The newest valid state on the branch, scanning from the leaf and stopping at the first readable one. */
export function rebuildState(branch: readonly BranchEntry[]): RebuiltState {
  let skipped: { index: number; error: WorkflowError }[] | undefined;
  for (let i = previousStateEntry(branch, branch.length - 1); i >= 0; i = previousStateEntry(branch, i - 1)) {
    const r = readEntry((branch[i] as BranchEntry).data);
    if (r.ok) return { state: r.state, skipped: skipped ?? NONE };
    (skipped ??= []).push({ index: i, error: r.error });
  }
  return { state: null, skipped: skipped ?? NONE };
}

const NONE: readonly never[] = Object.freeze([]);

/** The custom message type of the end-of-run message (pi-workflows 1.0.0 sends the same one). */
export const COMPLETE_MESSAGE = "workflow:complete";

/**
 * Whether the end of the run is already announced on the branch: a `workflow:complete` message newer than the
 * newest live state entry. pi-workflows 1.0.0 sends it before it saves its notified flag, so a session it
 * finished may hold the message with a state that still says "not notified".
 */
export function endAnnouncedOnBranch(branch: readonly BranchEntry[]): boolean {
  for (let i = branch.length - 1; i >= 0; i--) {
    const e = branch[i] as BranchEntry;
    if (e.type === "custom_message" && e.customType === COMPLETE_MESSAGE) return true;
    if (e.type === "custom" && e.customType === STATE_ENTRY) {
      const r = readEntry(e.data);
      if (r.ok && (r.state.status === "running" || r.state.status === "paused")) return false;
    }
  }
  return false;
}

/** One summary the agent gave when leaving a phase. */
export interface PhaseSummary {
  readonly taskId: string;
  readonly phaseName: string;
  readonly summary: string;
  readonly at: number;
}

/** The summaries of run `taskId` on the branch, oldest first. */
export function summariesOf(branch: readonly BranchEntry[], taskId: string): PhaseSummary[] {
  const out: PhaseSummary[] = [];
  for (const e of branch) {
    if (e.type !== "custom" || e.customType !== SUMMARY_ENTRY) continue;
    const d = e.data as Partial<PhaseSummary> | undefined;
    if (d?.taskId === taskId && typeof d.summary === "string" && typeof d.phaseName === "string") {
      out.push({ taskId, phaseName: d.phaseName, summary: d.summary, at: typeof d.at === "number" ? d.at : 0 });
    }
  }
  return out;
}
