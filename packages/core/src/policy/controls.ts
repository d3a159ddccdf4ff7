/**
 * The pure decisions over a run's controls: is a budget exhausted, has the run stopped making progress, may the
 * current phase be left. Adapters count (turns, tool calls, usage, failures) and record the counts in the run's
 * history; these functions only judge the counts against the definitions, with the reason text people read.
 */
import { DEFAULT_PROGRESS, type Budgets, type Gates, type OnExhausted, type ProgressThresholds } from "../definitions/controls-schema.js";
import type { ActiveWorkflow } from "../transitions/resolve-active.js";

/** What a scope has spent so far (every field counts up from 0; wall time in ms since the scope began). */
export interface BudgetUsage {
  readonly turns: number;
  readonly toolCalls: number;
  readonly tokens: number;
  readonly cost: number;
  readonly wallTimeMs: number;
}

/** A usage of nothing. */
export const NO_USAGE: BudgetUsage = Object.freeze({ turns: 0, toolCalls: 0, tokens: 0, cost: 0, wallTimeMs: 0 });

/** The limited quantities, in the order they are judged and shown. */
export const BUDGET_KEYS = ["turns", "toolCalls", "tokens", "cost", "wallTimeMs"] as const;
/** One limited quantity. */
export type BudgetKey = (typeof BUDGET_KEYS)[number];

const WORDS: Record<BudgetKey, string> = { turns: "turns", toolCalls: "tool calls", tokens: "tokens", cost: "cost", wallTimeMs: "ms of wall time" };

/** The verdict on one scope's budgets: what is left of each limited quantity, and the first one that ran out. */
export type BudgetVerdict =
  | { readonly exhausted: false; readonly left: Partial<Record<BudgetKey, number>> }
  | {
      readonly exhausted: true;
      readonly left: Partial<Record<BudgetKey, number>>;
      readonly key: BudgetKey;
      readonly limit: number;
      readonly used: number;
      readonly onExhausted: OnExhausted;
      /** "the phase Build's budget of 5 turns is used up (5 used)". */
      readonly reason: string;
    };

/** Judges `used` against `limits` (undefined: unlimited); `scope` names the budget's owner in the reason. */
export function budgetVerdict(limits: Budgets | undefined, used: BudgetUsage, scope: string): BudgetVerdict {
  const left: Partial<Record<BudgetKey, number>> = {};
  let first: BudgetKey | undefined;
  for (const key of BUDGET_KEYS) {
    const limit = limits?.[key];
    if (limit === undefined) continue;
    left[key] = Math.max(0, limit - used[key]);
    // Reached, not only passed: a budget of 5 turns is used up after the fifth, before a sixth starts.
    if (first === undefined && used[key] >= limit) first = key;
  }
  if (first === undefined || limits === undefined) return { exhausted: false, left };
  const limit = limits[first] as number;
  const reason = `${scope}'s budget of ${limit} ${WORDS[first]} is used up (${round(used[first])} used)`;
  return { exhausted: true, left, key: first, limit, used: used[first], onExhausted: limits.onExhausted, reason };
}

function round(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

/** The controls in force for a resolved run: the root workflow's and the current phase's budgets, thresholds, gates. */
export interface ActiveControls {
  readonly workflowBudgets: Budgets | undefined;
  readonly phaseBudgets: Budgets | undefined;
  /** Phase over innermost workflow over DEFAULT_PROGRESS, field by field. */
  readonly progress: Required<ProgressThresholds>;
  readonly gates: Gates | undefined;
  /** "workflow Release", "phase Build": the owners named in reasons. */
  readonly workflowLabel: string;
  readonly phaseLabel: string;
}

/** The controls of the run `active` is at. */
export function activeControls(active: ActiveWorkflow): ActiveControls {
  const phase = active.phase;
  return {
    workflowBudgets: active.definition.budgets as Budgets | undefined,
    phaseBudgets: phase.budgets as Budgets | undefined,
    progress: { ...DEFAULT_PROGRESS, ...dropUndefined(active.scope.progress ?? {}), ...dropUndefined(phase.progress ?? {}) },
    gates: phase.gates as Gates | undefined,
    workflowLabel: `workflow ${active.definition.name}`,
    phaseLabel: `phase ${phase.name}`,
  };
}

/** The first exhausted budget of the run (the workflow's before the phase's), or the budgets left. */
export function runBudgetVerdict(controls: ActiveControls, workflowUsed: BudgetUsage, phaseUsed: BudgetUsage): { workflow: BudgetVerdict; phase: BudgetVerdict; exhausted: BudgetVerdict | undefined } {
  const workflow = budgetVerdict(controls.workflowBudgets, workflowUsed, `the ${controls.workflowLabel}`);
  const phase = budgetVerdict(controls.phaseBudgets, phaseUsed, `the ${controls.phaseLabel}`);
  return { workflow, phase, exhausted: workflow.exhausted ? workflow : phase.exhausted ? phase : undefined };
}

/** What the no-progress rules look at, as the adapter counted it. */
export interface ProgressCounters {
  /** The last tool call and how many times in a row it was made with the same arguments. */
  readonly sameToolCall?: { readonly tool: string; readonly args: string; readonly count: number } | undefined;
  /** Turns in a row with no file changed and no step completed. */
  readonly idleTurns?: number;
  /** The step failing most in a row with the same input fingerprint. */
  readonly sameStepFailures?: { readonly stepId: string; readonly count: number } | undefined;
}

/** The no-progress verdict; `reason` names what repeated. */
export type ProgressVerdict = { readonly stalled: false } | { readonly stalled: true; readonly rule: keyof ProgressThresholds; readonly reason: string };

const ARGS_SHOWN = 120;

/** Judges the counters against the thresholds (0 turns a rule off). */
export function progressVerdict(thresholds: Required<ProgressThresholds>, counters: ProgressCounters): ProgressVerdict {
  const same = counters.sameToolCall;
  if (same !== undefined && thresholds.sameToolCall > 0 && same.count >= thresholds.sameToolCall) {
    const args = same.args.length > ARGS_SHOWN ? `${same.args.slice(0, ARGS_SHOWN)}…` : same.args;
    return { stalled: true, rule: "sameToolCall", reason: `no progress: the tool call ${same.tool} ${args} was made ${same.count} times in a row with the same arguments` };
  }
  const idle = counters.idleTurns ?? 0;
  if (thresholds.idleTurns > 0 && idle >= thresholds.idleTurns) {
    return { stalled: true, rule: "idleTurns", reason: `no progress: ${idle} turns in a row changed no file and completed no step` };
  }
  const failing = counters.sameStepFailures;
  if (failing !== undefined && thresholds.sameStepFailures > 0 && failing.count >= thresholds.sameStepFailures) {
    return { stalled: true, rule: "sameStepFailures", reason: `no progress: step ${JSON.stringify(failing.stepId)} failed ${failing.count} times with the same input` };
  }
  return { stalled: false };
}

/** What is known about the gates of the current phase. */
export interface GateFacts {
  /** The verify commands' latest outcome in this phase (absent: not run yet). */
  readonly verify?: { readonly passed: true } | { readonly passed: false; readonly command: string; readonly output: string };
  /** The person's decision in this phase (absent: none yet). */
  readonly approval?: { readonly decision: "approved"; readonly data?: unknown } | { readonly decision: "rejected"; readonly reason?: string };
}

/** May the phase be left: yes, or which gate holds it, who it waits for, the reason, and where a "no" routes. */
export type GateVerdict =
  | { readonly pass: true }
  | {
      readonly pass: false;
      readonly gate: "verify" | "approve";
      /** Who must act: the agent (fix the failing command) or a person (approve). */
      readonly waitsFor: "agent" | "person";
      /** "run" when verify has not run yet in this phase, "failed", "waiting", "rejected". */
      readonly state: "run" | "failed" | "waiting" | "rejected";
      readonly reason: string;
      /** Where core's `route` sends the run for this "no" (onFail / onReject), when the phase declares it. */
      readonly routeTo?: string;
    };

/** The verdict on leaving a phase with `gates`, given what is known (verify first, then approval). */
export function gateVerdict(gates: Gates | undefined, facts: GateFacts, phaseLabel: string): GateVerdict {
  if (gates?.verify !== undefined) {
    const v = facts.verify;
    if (v === undefined) return { pass: false, gate: "verify", waitsFor: "agent", state: "run", reason: `${phaseLabel} has a verify gate: its commands must pass first (${gates.verify.commands.join("; ")})` };
    if (!v.passed) {
      const failed = `${phaseLabel} cannot be left: the verify command \`${v.command}\` failed.`;
      // With onFail the run goes back (core's `route`); without, the agent fixes it here.
      if (gates.onFail !== undefined) return { pass: false, gate: "verify", waitsFor: "agent", state: "failed", reason: `${failed}\n${v.output}`, routeTo: gates.onFail };
      return { pass: false, gate: "verify", waitsFor: "agent", state: "failed", reason: `${failed} Fix it, then call workflow_step next again.\n${v.output}` };
    }
  }
  if (gates?.approve !== undefined) {
    const a = facts.approval;
    if (a === undefined) return { pass: false, gate: "approve", waitsFor: "person", state: "waiting", reason: `${phaseLabel} waits for a person's approval: ${gates.approve.prompt}` };
    if (a.decision === "rejected") {
      const route = gates.onReject === undefined ? {} : { routeTo: gates.onReject };
      return { pass: false, gate: "approve", waitsFor: "person", state: "rejected", reason: `${phaseLabel} was rejected${a.reason === undefined ? "" : `: ${a.reason}`}`, ...route };
    }
  }
  return { pass: true };
}

function dropUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
