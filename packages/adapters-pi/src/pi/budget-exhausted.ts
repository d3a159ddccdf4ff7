/**
 * What a pi run does when a budget runs out, as its definition says (`onExhausted`): `pause` (the default: the
 * person resumes it, with a raised budget if they want: `/workflow-resume <id> turns=60`), `fail` (core's `fail`,
 * the run ends failed with the reason), or `ask` (the person chooses in pi's dialog: raise it and go on, pause, or
 * fail; with no one to ask, in print mode, it pauses).
 */
import { fail, refusalToError, type BudgetKey, type BudgetVerdict, type WorkflowState } from "@phasekit/core";
import type { Step, WorkflowRegistry } from "./core-bridge.js";
import type { PiContext } from "./host.js";

type Exhausted = Extract<BudgetVerdict, { exhausted: true }>;

/** What to do about an exhausted budget: pause, fail, or raise `key` to `to` and go on. */
export type ExhaustedAction = { kind: "pause"; note?: string } | { kind: "fail" } | { kind: "raise"; key: BudgetKey; to: number };

/** The choices of the `ask` dialog, in order. */
export function askChoices(v: Exhausted): { raise: string; pause: string; fail: string; to: number } {
  const to = raisedTo(v.limit);
  return { raise: `Raise it to ${to} ${v.key} and go on`, pause: "Pause the run", fail: "Fail the run", to };
}

/** A raise worth asking for: twice the limit (at least one more). */
function raisedTo(limit: number): number {
  return Math.max(limit * 2, limit + 1);
}

/** Decides per `onExhausted`; `ask` asks the person when pi has a dialog. */
export async function exhaustedAction(ctx: PiContext, v: Exhausted): Promise<ExhaustedAction> {
  if (v.onExhausted === "fail") return { kind: "fail" };
  if (v.onExhausted === "pause") return { kind: "pause" };
  if (!ctx.hasUI || ctx.ui.select === undefined) return { kind: "pause", note: "no one to ask here (no dialog): paused" };
  const c = askChoices(v);
  let answer: string | undefined;
  try {
    answer = await ctx.ui.select(`${v.reason}. What now?`, [c.raise, c.pause, c.fail]);
  } catch {
    answer = undefined; // a dialog the host could not show: pause, the safe answer
  }
  if (answer === c.raise) return { kind: "raise", key: v.key, to: c.to };
  if (answer === c.fail) return { kind: "fail" };
  return { kind: "pause" };
}

/** Core's `fail` as a pi Step (a refusal keeps `state`). */
export function failRun(state: WorkflowState, registry: WorkflowRegistry, reason: string, now: number): Step {
  const r = fail(registry, state, reason, { now });
  return r.ok ? { ok: true, state: r.state, happened: r.happened } : { ok: false, error: refusalToError(r.error), state };
}
