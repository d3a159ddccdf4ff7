/**
 * The run controls at the package boundary: one judgement over everything an adapter counted (budgets, progress,
 * gates) and the one validator of an approval's payload. Both total: a wrong argument is INVALID_OPTIONS, never
 * a throw (see boundary.ts).
 */
import { z } from "zod";
import { refusal, type Outcome, type Refusal } from "../errors/refusal.js";
import { describeValue } from "../errors/problems.js";
import { schemaIssue } from "../errors/schema-issue.js";
import { activeError } from "../transitions/arguments.js";
import { approvalValidator } from "../definitions/gate-checks.js";
import { activeControls, BUDGET_KEYS, budgetVerdict, gateVerdict, progressVerdict, runBudgetVerdict, type ActiveControls, type BudgetKey, type BudgetUsage, type BudgetVerdict, type GateFacts, type GateVerdict, type ProgressCounters, type ProgressVerdict } from "../policy/controls.js";
import type { ActiveWorkflow } from "../transitions/resolve-active.js";
import { BudgetsSchema, DEFAULT_PROGRESS, ProgressSchema, type Budgets, type ProgressThresholds } from "../definitions/controls-schema.js";

const n = z.number().min(0).refine(Number.isFinite);
const usage = z.object({ turns: n, toolCalls: n, tokens: n, cost: n, wallTimeMs: n });
const FactsSchema = z.object({
  workflowUsed: usage,
  phaseUsed: usage,
  progress: z
    .object({
      sameToolCall: z.object({ tool: z.string(), args: z.string(), count: n }).optional(),
      idleTurns: n.optional(),
      sameStepFailures: z.object({ stepId: z.string(), count: n }).optional(),
    })
    .optional(),
  gates: z
    .object({
      verify: z.union([z.object({ passed: z.literal(true) }), z.object({ passed: z.literal(false), command: z.string(), output: z.string() })]).optional(),
      approval: z.union([z.object({ decision: z.literal("approved"), data: z.unknown().optional() }), z.object({ decision: z.literal("rejected"), reason: z.string().optional() })]).optional(),
    })
    .optional(),
  raised: z.object({ workflow: z.partialRecord(z.enum(BUDGET_KEYS), n).optional(), phase: z.partialRecord(z.enum(BUDGET_KEYS), n).optional() }).optional(),
});

/** What an adapter counted for the run's current scope and phase. */
export interface ControlFacts {
  readonly workflowUsed: BudgetUsage;
  readonly phaseUsed: BudgetUsage;
  readonly progress?: ProgressCounters;
  readonly gates?: GateFacts;
  /**
   * Limits a person raised when resuming (e.g. `/workflow-resume <id> turns=60`): each replaces the declared limit
   * of the same quantity (or adds one), for the workflow or for the current phase.
   */
  readonly raised?: { readonly workflow?: Partial<Record<BudgetKey, number>>; readonly phase?: Partial<Record<BudgetKey, number>> };
}

/** The judgement on a resolved run: its controls, its budgets (the first exhausted one), progress, and the gate. */
export interface ControlsJudgement {
  readonly controls: ActiveControls;
  readonly budget: { readonly workflow: BudgetVerdict; readonly phase: BudgetVerdict; readonly exhausted: BudgetVerdict | undefined };
  readonly progress: ProgressVerdict;
  readonly gate: GateVerdict;
}

const FACTS_HINT = "Pass { workflowUsed, phaseUsed } (turns, toolCalls, tokens, cost, wallTimeMs: numbers ≥ 0) and optionally progress and gates.";

/** Judges what the adapter counted against the definitions of the run `active` is at (see policy/controls.ts). */
export function judgeControls(active: ActiveWorkflow, facts: ControlFacts): Outcome<{ readonly judgement: ControlsJudgement }, "INVALID_OPTIONS"> {
  try {
    const bad = activeError("controls", active);
    if (bad !== undefined) return { ok: false, error: bad };
    const parsed = FactsSchema.safeParse(facts);
    if (!parsed.success) {
      return { ok: false, error: refusal("controls", "INVALID_OPTIONS", `${schemaIssue(parsed.error, facts, "facts").text}.`, { field: "facts", hint: FACTS_HINT }) };
    }
    const f = parsed.data as ControlFacts;
    const controls = withRaised(activeControls(active), f.raised);
    return {
      ok: true,
      judgement: {
        controls,
        budget: runBudgetVerdict(controls, f.workflowUsed, f.phaseUsed),
        progress: progressVerdict(controls.progress, f.progress ?? {}),
        gate: gateVerdict(controls.gates, f.gates ?? {}, controls.phaseLabel),
      },
    };
  } catch {
    return { ok: false, error: refusal("controls", "INVALID_OPTIONS", "an argument could not be read as plain data.", { hint: FACTS_HINT }) };
  }
}

const LIMITS_HINT = "Pass budget limits (BudgetsSchema), the usage (turns, toolCalls, tokens, cost, wallTimeMs: numbers ≥ 0) and a scope name.";

/**
 * Judges one scope's budget without a resolved workflow (a `runWorkflow` body's `ctx.budget`): the same rule and
 * reason text as `judgeControls`. `scope` names the owner in the reason ("run rel-1").
 */
export function judgeBudget(limits: Budgets | undefined, used: BudgetUsage, scope: string): Outcome<{ readonly verdict: BudgetVerdict }, "INVALID_OPTIONS"> {
  try {
    const l = limits === undefined ? undefined : BudgetsSchema.safeParse(limits);
    const u = usage.safeParse(used);
    const bad = (message: string, field: string): { ok: false; error: Refusal<"INVALID_OPTIONS"> } => ({ ok: false, error: refusal("controls", "INVALID_OPTIONS", `judgeBudget: ${message}.`, { field, hint: LIMITS_HINT }) });
    if (l !== undefined && !l.success) return bad(schemaIssue(l.error, limits, "limits").text, "limits");
    if (!u.success) return bad(schemaIssue(u.error, used, "used").text, "used");
    if (typeof scope !== "string") return bad(`scope must be a string, got ${describeValue(scope)}`, "scope");
    return { ok: true, verdict: budgetVerdict(l?.data, u.data, scope) };
  } catch {
    return { ok: false, error: refusal("controls", "INVALID_OPTIONS", "an argument could not be read as plain data.", { hint: LIMITS_HINT }) };
  }
}

/**
 * Judges no-progress counters against thresholds (over DEFAULT_PROGRESS, field by field) without a resolved
 * workflow (a `runWorkflow` body's steps): the same rules and reason texts as `judgeControls`.
 */
export function judgeProgress(thresholds: ProgressThresholds | undefined, counters: ProgressCounters): Outcome<{ readonly verdict: ProgressVerdict }, "INVALID_OPTIONS"> {
  try {
    const t = ProgressSchema.safeParse(thresholds ?? {});
    const c = FactsSchema.shape.progress.safeParse(counters);
    if (!t.success || !c.success || c.data === undefined) {
      const why = !t.success ? schemaIssue(t.error, thresholds ?? {}, "thresholds").text : !c.success ? schemaIssue(c.error, counters, "counters").text : "counters: expected an object, got nothing";
      return { ok: false, error: refusal("controls", "INVALID_OPTIONS", `judgeProgress: ${why}.`, { field: !t.success ? "thresholds" : "counters", hint: "Pass ProgressSchema thresholds and { sameToolCall?, idleTurns?, sameStepFailures? } counters." }) };
    }
    const merged = { ...DEFAULT_PROGRESS, ...Object.fromEntries(Object.entries(t.data).filter(([, v]) => v !== undefined)) } as Required<ProgressThresholds>;
    return { ok: true, verdict: progressVerdict(merged, c.data as ProgressCounters) };
  } catch {
    return { ok: false, error: refusal("controls", "INVALID_OPTIONS", "an argument could not be read as plain data.", { hint: "pass plain data" }) };
  }
}

/** The controls with a person's raised limits in place of the declared ones (onExhausted kept; "pause" if none). */
function withRaised(controls: ActiveControls, raised: ControlFacts["raised"]): ActiveControls {
  if (raised === undefined) return controls;
  const raise = (b: Budgets | undefined, r: Partial<Record<BudgetKey, number>> | undefined): Budgets | undefined =>
    r === undefined || Object.keys(r).length === 0 ? b : { ...(b ?? { onExhausted: "pause" as const }), ...r };
  return { ...controls, workflowBudgets: raise(controls.workflowBudgets, raised.workflow), phaseBudgets: raise(controls.phaseBudgets, raised.phase) };
}

/**
 * Checks an approval's payload against the gate's JSON Schema (none: any JSON value, or nothing). The parsed
 * payload is what the next phase and `ctx.waitForApproval` get. INVALID_APPROVAL names the first mismatch.
 */
export function validateApproval(schema: unknown, data: unknown): Outcome<{ readonly data: unknown }, "INVALID_OPTIONS" | "INVALID_APPROVAL"> {
  try {
    if (schema === undefined) return { ok: true, data };
    const v = approvalValidator(schema);
    if (!v.ok) return { ok: false, error: refusal("approval", "INVALID_OPTIONS", `schema is ${v.reason}.`, { field: "schema", hint: "pass the gate's JSON Schema" }) };
    const parsed = v.schema.safeParse(data);
    if (parsed.success) return { ok: true, data: parsed.data };
    const issue = schemaIssue(parsed.error, data, "payload");
    return {
      ok: false,
      error: refusal("approval", "INVALID_APPROVAL", `${issue.field} does not match the approval's schema: ${issue.reason}.`, {
        field: "data",
        hint: "send a payload the gate's schema accepts (phasekit approve <run> --data '<JSON>')",
      }),
    };
  } catch {
    return { ok: false, error: refusal("approval", "INVALID_OPTIONS", "an argument could not be read as plain data.", { hint: "pass plain JSON" }) };
  }
}
