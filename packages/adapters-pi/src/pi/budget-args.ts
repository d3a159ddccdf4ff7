/**
 * The budget a person raises when resuming a run in pi: `/workflow-resume [id] turns=60 phase.cost=2`. Each
 * `key=value` replaces the declared limit of that quantity for the workflow (or, with `phase.`, for the current
 * phase); core applies it (`judgeControls` facts `raised`). Values are checked by core's budget schema.
 */
import { BUDGET_KEYS, BudgetsSchema, type BudgetKey } from "@phasekit/core";
import { schemaIssue } from "../engine/record-issue.js";

/** Raised limits, for the workflow and for the current phase. */
export interface RaisedBudgets {
  workflow?: Partial<Record<BudgetKey, number>>;
  phase?: Partial<Record<BudgetKey, number>>;
}

const HINT = `write key=value with a key among ${BUDGET_KEYS.join(", ")} (phase.<key> for the current phase), e.g. /workflow-resume <id> turns=60`;

/** The run id and the raised limits in the arguments of `/workflow-resume`, or why they are wrong. */
export function parseResumeArgs(args: string): { ok: true; id: string; raised: RaisedBudgets | undefined } | { ok: false; message: string } {
  let id = "";
  const raised: RaisedBudgets = {};
  for (const token of args.trim().split(/\s+/u).filter((t) => t !== "")) {
    const eq = token.indexOf("=");
    if (eq < 0) {
      if (id !== "") return { ok: false, message: `/workflow-resume takes one run id, got ${JSON.stringify(id)} and ${JSON.stringify(token)}; ${HINT}` };
      id = token;
      continue;
    }
    const name = token.slice(0, eq);
    const scope = name.startsWith("phase.") ? "phase" : "workflow";
    const key = scope === "phase" ? name.slice("phase.".length) : name;
    if (!(BUDGET_KEYS as readonly string[]).includes(key)) return { ok: false, message: `budget ${JSON.stringify(name)} is not a budget; ${HINT}` };
    const text = token.slice(eq + 1);
    const value = text.trim() === "" ? Number.NaN : Number(text);
    const checked = BudgetsSchema.safeParse({ [key]: value });
    if (!checked.success || !Number.isFinite(value)) {
      return { ok: false, message: `budget ${name}=${JSON.stringify(text)} is not valid (${checked.success ? "not a finite number" : schemaIssue(checked.error, { [key]: value }).reason}); ${HINT}` };
    }
    raised[scope] = { ...raised[scope], [key as BudgetKey]: value };
  }
  return { ok: true, id, raised: raised.workflow === undefined && raised.phase === undefined ? undefined : raised };
}
