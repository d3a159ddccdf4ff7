/**
 * The package boundary: every function `@phasekit/core` exports, in the form a JavaScript caller gets. The one
 * home of "never throws": whatever an untyped caller passes (null, a number, a Proxy whose traps throw, an object
 * with a throwing getter, a cycle), an exported function answers instead of throwing:
 *
 * - a function with an outcome returns `{ ok: false, error }` with INVALID_OPTIONS (INVALID_REGISTRY for the
 *   registry). Wrong types are named by the argument checks (transitions/arguments.ts); a read that throws
 *   anyway (an exotic object) is caught here, once, for all of them;
 * - the texts and `toPersisted`, plain values inside core, are outcomes here (`{ ok: true, text }`,
 *   `{ ok: true, state }`), so a wrong argument has somewhere to go;
 * - a predicate answers false; an error builder returns a WorkflowError (INVALID_OPTIONS for its own bad input).
 *
 * Inside core the modules call each other directly (typed callers, no second check on the hot path).
 */
import { compileDefinitions as compileRaw, definitionProblemsError as problemsErrorRaw } from "../definitions/compile.js";
import { isCompiledRegistry as isCompiledRaw } from "../definitions/registry.js";
import { isSubworkflowRef as isRefRaw } from "../definitions/schema.js";
import { isBlocking as isBlockingRaw, type DefinitionProblem } from "../errors/problems.js";
import { schemaIssue as schemaIssueRaw, type SchemaFailure, type SchemaIssue } from "../errors/schema-issue.js";
import { refusal, refusalToError as toErrorRaw, type Outcome, type Refusal } from "../errors/refusal.js";
import { isWorkflowError as isErrorRaw, workflowError as workflowErrorRaw, WorkflowError, type WorkflowErrorCode, type WorkflowErrorDetails } from "../errors/workflow-error.js";
import { checkDefinitions as checkDefinitionsRaw } from "../policy/check-definitions.js";
import { checkTool as checkToolRaw } from "../policy/check-tool.js";
import { contextPrompt as contextPromptRaw } from "../present/context-prompt.js";
import type { PromptExtras } from "../present/prompt-vars.js";
import * as messages from "../present/messages.js";
import { statusLine as statusLineRaw } from "../present/status-line.js";
import { phaseLabel as phaseLabelRaw, stepResultLine as stepResultLineRaw } from "../present/step-result.js";
import { renderTemplate as renderRaw, type TemplateVars } from "../definitions/template.js";
import { migrateState as migrateRaw, parseState as parseRaw } from "../state/migrate.js";
import { isFinished as isFinishedRaw, isLive as isLiveRaw, toPersisted as toPersistedRaw, type WorkflowState } from "../state/schema.js";
import { advance as advanceRaw } from "../transitions/advance.js";
import { activeError, optionError, phaseRefError, stateError, stringError } from "../transitions/arguments.js";
import { cancel as cancelRaw, cancelNow as cancelNowRaw } from "../transitions/cancel.js";
import * as lifecycle from "../transitions/lifecycle.js";
import { loop as loopRaw } from "../transitions/loop.js";
import { reduce as reduceRaw } from "../transitions/reduce.js";
import { resolveActive as resolveRaw, type ActiveWorkflow } from "../transitions/resolve-active.js";
import { restartScope as restartScopeRaw } from "../transitions/restart-scope.js";
import { route as routeRaw } from "../transitions/route.js";
import { carryPosition as carryPositionRaw } from "../transitions/carry-position.js";
import { start as startRaw } from "../transitions/start.js";
import type { Happening, PhaseRef } from "../transitions/types.js";

type AnyFn = (...args: never[]) => unknown;

/** A refused text: only a wrong argument can refuse one. */
export type TextOutcome = Outcome<{ readonly text: string }, "INVALID_OPTIONS">;

const EXOTIC_HINT = "Pass plain data: core reads its arguments as plain objects and arrays, not Proxies or objects whose getters throw.";

/** The refusal for an argument whose reading threw (an exotic object): never a second throw while reporting it. */
function unreadable(scope: string, thrown: unknown): Refusal<"INVALID_OPTIONS"> {
  let what = "a value that is not an Error";
  try {
    if (thrown instanceof Error) what = `${thrown.name}: ${String(thrown.message).slice(0, 120)}`;
  } catch {
    // The thrown value is itself exotic; the generic description stands.
  }
  return refusal(scope, "INVALID_OPTIONS", `an argument could not be read as plain data (${what}).`, { hint: EXOTIC_HINT });
}

/** `fn` with its throws turned into `onThrow(thrown)`, under `fn`'s own name and type. */
function total<F extends AnyFn>(fn: F, onThrow: (thrown: unknown) => unknown): F {
  const call = fn as unknown as (...args: unknown[]) => unknown;
  const wrapped = (...args: unknown[]): unknown => {
    try {
      return call(...args);
    } catch (thrown) {
      return onThrow(thrown);
    }
  };
  Object.defineProperty(wrapped, "name", { value: fn.name });
  return wrapped as unknown as F;
}

const outcome = <F extends AnyFn>(scope: string, fn: F): F => total(fn, (t) => ({ ok: false, error: unreadable(scope, t) }));
const predicate = <F extends AnyFn>(fn: F): F => total(fn, () => false);
const errorBuilder = <F extends AnyFn>(scope: string, fn: F): F => total(fn, (t) => toErrorRaw(unreadable(scope, t)));

/** Runs `body` (argument checks first), catching a read that throws. */
function attempt<R>(scope: string, body: () => R): R | { readonly ok: false; readonly error: Refusal<"INVALID_OPTIONS"> } {
  try {
    return body();
  } catch (thrown) {
    return { ok: false, error: unreadable(scope, thrown) };
  }
}

const fromRefusal = (bad: Refusal | undefined): { ok: false; error: Refusal<"INVALID_OPTIONS"> } | undefined =>
  bad === undefined ? undefined : { ok: false, error: bad as Refusal<"INVALID_OPTIONS"> };

// Definitions, state, transitions, policy, messages: outcomes already; only exotic reads are caught here.
export const compileDefinitions = outcome("definitions", compileRaw);
export const migrateState = outcome("parse", migrateRaw);
export const parseState = outcome("parse", parseRaw);
export const start = outcome("start", startRaw);
export const advance = outcome("advance", advanceRaw);
export const loop = outcome("loop", loopRaw);
export const restartScope = outcome("restart-scope", restartScopeRaw);
/** Where a gate's "no" sends the run (onFail / onReject), counted as a loop of its scope. */
export const route = outcome("route", routeRaw);
/** A live run onto new definitions at the same phase ids (DEFINITIONS_CHANGED when its phase is gone there). */
export const carryPosition = outcome("carry-position", carryPositionRaw);
export const cancel = outcome("cancel", cancelRaw);
export const cancelNow = outcome("cancel-now", cancelNowRaw);
export const pause = outcome("pause", lifecycle.pause);
export const resume = outcome("resume", lifecycle.resume);
export const fail = outcome("fail", lifecycle.fail);
export const markCompletionNotified = outcome("mark-notified", lifecycle.markCompletionNotified);
export const reduce = outcome("reduce", reduceRaw);
export const resolveActive = outcome("resolve", resolveRaw);
export const checkTool = outcome("tool", checkToolRaw);
export const checkDefinitions = outcome("definitions-check", checkDefinitionsRaw);
export const completionMessage = outcome("messages", messages.completionMessage);
export const cancelledMessage = outcome("messages", messages.cancelledMessage);
export const failedMessage = outcome("messages", messages.failedMessage);
export const endOfRunMessage = outcome("messages", messages.endOfRunMessage);
export const initialMessage = outcome("messages", messages.initialMessage);

// Predicates: false for anything they cannot read.
export const isCompiledRegistry = predicate(isCompiledRaw);
export const isSubworkflowRef = predicate(isRefRaw);
export const isBlocking = predicate(isBlockingRaw);
export const isWorkflowError = predicate(isErrorRaw);
export const isLive = predicate(isLiveRaw);
export const isFinished = predicate(isFinishedRaw);

/** The status-bar text for a resolved run. */
export function statusLine(active: ActiveWorkflow): TextOutcome {
  return attempt("status", () => fromRefusal(activeError("status", active)) ?? { ok: true, text: statusLineRaw(active) });
}

/** The hidden context prompt of a resolved run. */
export function contextPrompt(active: ActiveWorkflow, extras?: PromptExtras): TextOutcome {
  return attempt("context", () => {
    const bad = activeError("context", active) ?? extrasError(extras);
    return fromRefusal(bad) ?? { ok: true, text: contextPromptRaw(active, extras) };
  });
}

/** `extras` must be undefined or an object whose `approval` is plain JSON (it is shown as JSON). */
function extrasError(extras: unknown): Refusal<"INVALID_OPTIONS"> | undefined {
  if (extras === undefined) return undefined;
  const hint = "Pass { approval } with the approved payload as plain JSON, or nothing.";
  if (typeof extras !== "object" || extras === null || Array.isArray(extras)) return refusal("context", "INVALID_OPTIONS", "extras must be an object.", { field: "extras", hint });
  const approval = (extras as { approval?: unknown }).approval;
  if (approval === undefined) return undefined;
  let json: string | undefined;
  try {
    json = JSON.stringify(approval);
  } catch {
    json = undefined;
  }
  return json === undefined ? refusal("context", "INVALID_OPTIONS", "extras.approval is not plain JSON.", { field: "extras.approval", hint }) : undefined;
}

/** The reminder sent when the agent stops mid-run. */
export function notDoneReminder(active: ActiveWorkflow): TextOutcome {
  return attempt("messages", () => fromRefusal(activeError("messages", active)) ?? { ok: true, text: messages.notDoneReminder(active) });
}

const STEP_HINT = "Call stepResultLine(happened, fromName, to, next, workflowName) with a core Happening and PhaseRefs (or null).";

/** The first line of a `workflow_step` result (see present/step-result.ts). */
export function stepResultLine(happened: Happening, from: string, to: PhaseRef | null, next: PhaseRef | null, workflowName: string): TextOutcome {
  return attempt("step", () => {
    const type = typeof happened === "object" && happened !== null ? (happened as { type?: unknown }).type : undefined;
    const bad =
      (typeof type === "string" ? undefined : optionError("step", "happened.type", "must be a string", type, STEP_HINT)) ??
      stringError("step", "from", from, STEP_HINT) ??
      phaseRefError("step", "to", to, STEP_HINT) ??
      phaseRefError("step", "next", next, STEP_HINT) ??
      stringError("step", "workflowName", workflowName, STEP_HINT);
    return fromRefusal(bad) ?? { ok: true, text: stepResultLineRaw(happened, from, to, next, workflowName) };
  });
}

/** `🔍 Review`, or the bare name without an emoji. */
export function phaseLabel(emoji: string, name: string): TextOutcome {
  const hint = "Call phaseLabel(emoji, name) with two strings.";
  return attempt("step", () => fromRefusal(stringError("step", "emoji", emoji, hint) ?? stringError("step", "name", name, hint)) ?? { ok: true, text: phaseLabelRaw(emoji, name) });
}

/** Renders `template` in one pass (see definitions/template.ts). */
export function renderTemplate(template: string, vars: TemplateVars, allowlist: ReadonlySet<string>): TextOutcome {
  const hint = "Call renderTemplate(template, vars, allowlist) with a string, an object of values and one of core's *_VARS sets.";
  return attempt("template", () => {
    const bad =
      stringError("template", "template", template, hint) ??
      (typeof vars === "object" && vars !== null ? undefined : optionError("template", "vars", "must be an object", vars, hint)) ??
      (typeof allowlist === "object" && allowlist !== null && typeof allowlist.has === "function" ? undefined : optionError("template", "allowlist", "must be a set of names", allowlist, hint));
    return fromRefusal(bad) ?? { ok: true, text: renderRaw(template, vars, allowlist) };
  });
}

/** What a failed schema parse says in an error: its first issue's field, reason and value (see errors/schema-issue.ts). */
export function describeSchemaIssue(failure: SchemaFailure, input: unknown, prefix?: string): Outcome<{ readonly issue: SchemaIssue }, "INVALID_OPTIONS"> {
  const hint = "Call describeSchemaIssue(error, input, prefix?) with the error of a failed safeParse, the input it parsed and a name for that input.";
  return attempt("schema", () => {
    const issues = typeof failure === "object" && failure !== null ? (failure as { issues?: unknown }).issues : undefined;
    const bad =
      (Array.isArray(issues) ? undefined : optionError("schema", "failure", "must be a zod error (with an issues list)", failure, hint)) ??
      (prefix === undefined ? undefined : stringError("schema", "prefix", prefix, hint));
    return fromRefusal(bad) ?? { ok: true, issue: schemaIssueRaw(failure, input, prefix) };
  });
}

/** The form of a state to write to disk or a session entry (see state/schema.ts). */
export function toPersisted(state: WorkflowState): Outcome<{ readonly state: WorkflowState }, "INVALID_OPTIONS"> {
  return attempt("persist", () => fromRefusal(stateError("persist", state)) ?? { ok: true, state: toPersistedRaw(state) });
}

// Error builders: always an error to throw or return; INVALID_OPTIONS when their own input is wrong.
const badBuilderInput = (scope: string, field: string, reason: string, value: unknown, hint: string): WorkflowError => toErrorRaw(optionError(scope, field, reason, value, hint));

/** Builds a `WorkflowError` whose message starts with where it comes from (see errors/workflow-error.ts). */
export const workflowError = errorBuilder(
  "workflowError",
  (scope: string, code: WorkflowErrorCode, message: string, details?: WorkflowErrorDetails, cause?: unknown): WorkflowError => {
    const hint = "Call workflowError(scope, code, message, details?, cause?) with strings for the first three.";
    for (const [field, value] of [["scope", scope], ["code", code], ["message", message]] as const) {
      if (typeof value !== "string") return badBuilderInput("workflowError", field, "must be a string", value, hint);
    }
    if (details !== undefined && (typeof details !== "object" || details === null)) return badBuilderInput("workflowError", "details", "must be an object or absent", details, hint);
    return workflowErrorRaw(scope, code, message, details, cause);
  },
);

/** A refusal as a throwable `WorkflowError` (same code, message and details). */
export const refusalToError = errorBuilder("refusalToError", (r: Refusal): WorkflowError => {
  const v = typeof r === "object" && r !== null ? (r as { code?: unknown; message?: unknown; details?: unknown }) : undefined;
  if (v === undefined || typeof v.code !== "string" || typeof v.message !== "string" || typeof v.details !== "object" || v.details === null) {
    return badBuilderInput("refusalToError", "refusal", "must be a refusal ({ code, message, details })", r, "Pass outcome.error of a refused core call.");
  }
  return toErrorRaw(r);
});

/** The thrown form of a problem list: the refusal's summary (see definitions/compile.ts). */
export const definitionProblemsError = errorBuilder("definitions", (problems: readonly DefinitionProblem[], file?: string): WorkflowError => {
  const hint = "Pass the problems of a compileDefinitions result (and optionally the file they came from).";
  if (!Array.isArray(problems)) return badBuilderInput("definitions", "problems", "must be an array of definition problems", problems, hint);
  const at = problems.findIndex((p: unknown) => typeof p !== "object" || p === null || typeof (p as DefinitionProblem).code !== "string" || typeof (p as DefinitionProblem).message !== "string");
  if (at >= 0) return badBuilderInput("definitions", `problems[${at}]`, "must be a definition problem ({ code, message, … })", problems[at], hint);
  if (file !== undefined && typeof file !== "string") return badBuilderInput("definitions", "file", "must be a string or absent", file, hint);
  return problemsErrorRaw(problems, file);
});
