/**
 * Zod schemas of the run controls a definition may declare: budgets (per workflow and per phase), no-progress
 * thresholds, and the gates on leaving a phase. Every field is optional and has no default at the top level, so a
 * definition that declares none of them keeps its fingerprint (pinned runs are not disturbed by this addition).
 */
import { z } from "zod";
import { KEY_PATTERN } from "./schema-keys.js";

const count = z.number().int().min(0);

/** What a run does when one of its budgets runs out: pause with the reason (default), fail, or ask the person. */
export const OnExhaustedSchema = z.enum(["pause", "fail", "ask"]);

/**
 * Limits on what a scope may spend. Agent turns, tool calls and tokens as pi reports them per assistant message,
 * cost in the provider's currency unit, wall time in ms since the scope was entered. Absent: unlimited.
 */
export const BudgetsSchema = z.strictObject({
  turns: count.optional().describe("agent turns (one assistant message each)"),
  toolCalls: count.optional().describe("tool calls, every tool"),
  wallTimeMs: count.optional().describe("milliseconds of wall time since the workflow (or phase) started"),
  tokens: count.optional().describe("input + output tokens as the provider reports them"),
  cost: z.number().min(0).optional().describe("cost as the provider reports it (e.g. USD)"),
  onExhausted: OnExhaustedSchema.default("pause").describe("pause (default), fail, or ask the person"),
});

/**
 * No-progress thresholds; 0 turns one off. Defaults: DEFAULT_PROGRESS. `sameToolCall`: the same tool with the
 * same arguments this many times in a row; `idleTurns`: this many turns with no file changed and no step
 * completed; `sameStepFailures`: the same step (same input fingerprint) failing this many times.
 */
export const ProgressSchema = z.strictObject({
  sameToolCall: count.optional().describe("the same tool call (same arguments) this many times in a row pauses the run; 0: off"),
  idleTurns: count.optional().describe("this many turns without a file change or a completed step pause the run; 0: off"),
  sameStepFailures: count.optional().describe("the same step failing this many times pauses the run; 0: off"),
});

const command = z.string().regex(/\S/u, "must be a non-empty command").refine((s) => !s.includes("\0"), "must not contain NUL");

/** Commands that must pass before the phase can be left (run through the verification policy and its cache). */
export const VerifyGateSchema = z.strictObject({
  commands: z.array(command).min(1).describe("shell commands run in order in the repository; all must exit 0"),
  timeoutMs: z.number().int().min(1).optional().describe("per command; the verification default otherwise"),
});

/** A person must approve leaving the phase, optionally handing it a payload that `schema` (JSON Schema) describes. */
export const ApproveGateSchema = z.strictObject({
  prompt: z.string().regex(KEY_PATTERN, "must contain a visible character").describe("what the person is asked"),
  schema: z.record(z.string(), z.unknown()).optional().describe("a JSON Schema the approval's payload must match"),
});

/** The gates on leaving a phase, and where the run goes when one of them says no. */
export const GatesSchema = z.strictObject({
  verify: VerifyGateSchema.optional(),
  approve: ApproveGateSchema.optional(),
  onFail: z.string().regex(KEY_PATTERN, "must contain a visible character").optional().describe("phase id to go back to when verify fails"),
  onReject: z.string().regex(KEY_PATTERN, "must contain a visible character").optional().describe("phase id to go back to when the approval is rejected"),
});

/** The no-progress thresholds used where a definition sets none (documented in docs/gates.md). */
export const DEFAULT_PROGRESS = Object.freeze({ sameToolCall: 5, idleTurns: 30, sameStepFailures: 3 });

/** Budget limits (defaults applied). */
export type Budgets = z.infer<typeof BudgetsSchema>;
/** No-progress thresholds as written. */
export type ProgressThresholds = z.infer<typeof ProgressSchema>;
/** A phase's gates. */
export type Gates = z.infer<typeof GatesSchema>;
/** What an exhausted budget does. */
export type OnExhausted = z.infer<typeof OnExhaustedSchema>;
