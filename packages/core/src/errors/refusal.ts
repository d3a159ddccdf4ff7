/**
 * Refusals: why core declined a move, as plain data. Plain objects survive `structuredClone`, `postMessage`
 * and JSON with their `code` (a class instance loses it), and their `name` lets `isWorkflowError` recognise
 * them as well as thrown `WorkflowError`s.
 */
import { scopedMessage, WorkflowError } from "./workflow-error.js";
import type { WorkflowErrorCode, WorkflowErrorDetails } from "./workflow-error.js";

/** Why a core function declined: a code from the function's own union, a message that says where, and facts. */
export interface Refusal<C extends WorkflowErrorCode = WorkflowErrorCode> {
  readonly name: "WorkflowError";
  readonly code: C;
  readonly message: string;
  readonly details: Readonly<WorkflowErrorDetails>;
}

/** The one outcome shape of core: the value, or a refusal whose code is one of `C`. Never both. */
export type Outcome<T, C extends WorkflowErrorCode> = ({ readonly ok: true } & T) | { readonly ok: false; readonly error: Refusal<C> };

/** Builds a refusal whose message starts with where it comes from: `[phasekit] [scope] message`. */
export function refusal<C extends WorkflowErrorCode>(scope: string, code: C, message: string, details: WorkflowErrorDetails = {}): Refusal<C> {
  // `value` is the offending input, kept only as a JSON primitive: a bigint, a symbol, a cycle or a Proxy from
  // an untyped caller would make the refusal itself unserialisable (the message already describes it).
  const v = details.value;
  const plain = v === undefined || v === null || typeof v === "string" || typeof v === "number" || typeof v === "boolean";
  return { name: "WorkflowError", code, message: scopedMessage(scope, message, details.hint), details: plain ? details : { ...details, value: undefined } };
}

/** A refusal as a throwable `WorkflowError` (same code, message and details), for adapters that throw. */
export function refusalToError(r: Refusal): WorkflowError {
  return new WorkflowError(r.code, r.message, { ...r.details });
}
