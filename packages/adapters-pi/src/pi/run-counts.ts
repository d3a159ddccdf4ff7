/**
 * What the pi extension counted for one run (run-controls.ts counts and judges), and its one record: the budget
 * entries of the run's history when this session holds it (durable-budget.ts; read with `fromHistory`, written
 * with `carried`), else a session entry (`workflow:controls`, read with `countsOnBranch`). Older versions wrote
 * that entry for every run: it is read for a run whose history holds no count yet.
 */
import { NO_USAGE, type BudgetUsage, type WorkflowState } from "@phasekit/core";
import type { RaisedBudgets } from "./budget-args.js";
import type { PiRunCounts, RecordedRun } from "./durable-budget.js";
import type { BranchEntry } from "./host.js";

/** The session entry holding the counts of a run without a history (and, from older versions, of every run). */
export const CONTROLS_ENTRY = "workflow:controls";

/** What the extension counted for one run. */
export interface Counts {
  taskId: string;
  /** Which phase the phase counts belong to (the state's path; a new phase resets them). */
  phaseKey: string;
  workflowUsed: BudgetUsage;
  phaseUsed: BudgetUsage;
  workflowStartedAt: number;
  phaseStartedAt: number;
  same: { tool: string; args: string; count: number } | undefined;
  idleTurns: number;
  /** Why this extension paused the run, while it is paused for that reason. */
  pausedFor: string | undefined;
  /** Limits a person raised (phase limits for the current phase only). */
  raised?: RaisedBudgets | undefined;
}

/** The newest counts of `taskId` on the branch, if any. */
export function countsOnBranch(branch: readonly BranchEntry[], taskId: string): Counts | undefined {
  for (let i = branch.length - 1; i >= 0; i--) {
    const e = branch[i] as { type?: string; customType?: string; data?: Counts } | undefined;
    if (e?.type === "custom" && e.customType === CONTROLS_ENTRY && e.data?.taskId === taskId) return e.data;
  }
  return undefined;
}

/** The counts of run `s` as its history recorded them (`recorded`; null: none yet, the run starts at zero). */
export function fromHistory(s: WorkflowState, key: string, now: number, recorded: RecordedRun | null): Counts {
  // Its phase and progress counts go on while the run is still in the phase they were counted in.
  const pi = recorded?.pi;
  const here = pi !== undefined && pi.phaseKey === key ? pi : undefined;
  return {
    taskId: s.taskId,
    phaseKey: key,
    workflowUsed: recorded === null ? NO_USAGE : { ...recorded.total, wallTimeMs: 0 },
    phaseUsed: here === undefined ? NO_USAGE : { ...here.phaseUsed, wallTimeMs: 0 },
    workflowStartedAt: Math.min(s.startedAt, now),
    phaseStartedAt: here === undefined ? now : Math.min(here.phaseStartedAt, now),
    same: here?.same,
    idleTurns: here?.idleTurns ?? 0,
    pausedFor: here?.pausedFor,
    // A raise of the workflow's limits holds for the run; of the phase's, for the phase it was made in.
    raised: raisedFor(pi?.raised, here !== undefined),
  };
}

/** What of `c` the run's history keeps for another session (the phase's counts and the progress counts). */
export function carried(c: Counts): PiRunCounts {
  const { turns, toolCalls, tokens, cost } = c.phaseUsed;
  return { phaseKey: c.phaseKey, phaseUsed: { turns, toolCalls, tokens, cost }, phaseStartedAt: c.phaseStartedAt, same: c.same, idleTurns: c.idleTurns, pausedFor: c.pausedFor, raised: c.raised };
}

function raisedFor(raised: RaisedBudgets | undefined, samePhase: boolean): RaisedBudgets | undefined {
  const kept = samePhase ? raised : raised?.workflow === undefined ? undefined : { workflow: raised.workflow };
  return kept?.workflow === undefined && kept?.phase === undefined ? undefined : kept;
}
