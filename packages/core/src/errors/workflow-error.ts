/**
 * The one error type of phasekit. Check it by `code` (see `isWorkflowError`), not `instanceof`, so two copies
 * of the package loaded side by side still agree.
 */

/** Every error a user can meet, grouped by where it comes from. */
export type WorkflowErrorCode =
  // definitions (compileDefinitions)
  | "INVALID_DEFINITION"
  | "DANGLING_REFERENCE"
  | "DEFINITION_CYCLE"
  | "DUPLICATE_PHASE_ID"
  | "TOOL_LISTS_CONFLICT"
  | "INVALID_COMMAND_NAME"
  | "EMPTY_PHASES"
  | "DUPLICATE_COMMAND_NAME"
  | "UNKNOWN_PROFILE"
  | "UNKNOWN_TEMPLATE_VARIABLE"
  | "UNKNOWN_WORKFLOW"
  | "NESTING_TOO_DEEP"
  | "UNKNOWN_PHASE"
  // state and transitions
  | "INVALID_STATE"
  | "UNSUPPORTED_VERSION"
  | "MISSING_DEFINITION"
  | "INVALID_PATH_INDEX"
  | "NOT_RUNNING"
  | "NOT_PAUSED"
  | "NOT_LOOPABLE"
  | "MAX_LOOPS_REACHED"
  | "ALREADY_NOTIFIED"
  | "NOT_FINISHED"
  | "ALREADY_STARTED"
  | "INVALID_REGISTRY"
  | "DEFINITIONS_CHANGED"
  | "NO_ROUTE"
  // storage (adapters)
  | "INVALID_SLUG"
  | "PATH_OUTSIDE_ROOT"
  | "CORRUPT_FILE"
  | "WRITE_FAILED"
  | "READ_FAILED"
  | "NOT_FOUND"
  | "LOCKED"
  | "LOCK_LOST"
  | "LOCK_NOT_OWNED"
  | "STALE_GENERATION"
  | "UNSERIALIZABLE"
  | "INVALID_OPTIONS"
  | "UNSAFE_FILE"
  | "FILE_TOO_LARGE"
  // run lifecycle (adapters)
  | "OWNED_BY_OTHER"
  | "AMBIGUOUS_TARGET"
  | "RUN_FAILED"
  | "RUN_PAUSED"
  | "RUN_STOPPED"
  | "MAX_STEPS_REACHED"
  | "MAX_ATTEMPTS_REACHED"
  | "HOOK_FAILED"
  | "RUN_FINISHED"
  | "STEP_TIMEOUT"
  | "INVALID_CONFIG"
  | "VERIFICATION_FAILED"
  | "INVALID_VERDICT"
  | "BUDGET_EXHAUSTED"
  | "NO_PROGRESS"
  | "GATE_OPEN"
  | "INVALID_APPROVAL"
  // a store that cannot do what was asked (rerunFrom on a backend without rerun marks)
  | "UNSUPPORTED"
  // a library phasekit loads on first use is not there (a bundle that left it out, a broken install)
  | "DEPENDENCY_MISSING";

/** Structured facts about an error: what a caller needs to locate and fix it. */
export interface WorkflowErrorDetails {
  /** Where the problem is: a file path, or a dotted/bracketed path into a document (`workflows.release.phases[2]`). */
  path?: string;
  file?: string;
  field?: string;
  value?: unknown;
  workflowKey?: string;
  phaseId?: string;
  /** How to fix it, in one sentence. */
  hint?: string;
  [key: string]: unknown;
}

/** phasekit's error: a `code` from `WorkflowErrorCode`, a message that says where, and structured `details`. */
export class WorkflowError extends Error {
  override readonly name = "WorkflowError";
  readonly code: WorkflowErrorCode;
  readonly details: WorkflowErrorDetails;

  constructor(code: WorkflowErrorCode, message: string, details: WorkflowErrorDetails = {}, options?: { cause?: unknown }) {
    // Never throws, whatever an untyped caller passes: an error that cannot be built would hide the one it reports.
    const cause = causeOf(options);
    super(typeof message === "string" ? message : "(no message: the message argument was not a string)", cause === undefined ? undefined : { cause });
    this.code = code;
    this.details = typeof details === "object" && details !== null ? details : {};
  }

  /** A plain-JSON view, so errors can be logged, journaled or sent over a pipe. */
  toJSON(): { name: string; code: WorkflowErrorCode; message: string; details: WorkflowErrorDetails } {
    return { name: this.name, code: this.code, message: this.message, details: this.details };
  }
}

/** `options.cause`, or undefined when options cannot be read (a Proxy whose getter throws). */
function causeOf(options: unknown): unknown {
  try {
    return typeof options === "object" && options !== null ? (options as { cause?: unknown }).cause : undefined;
  } catch {
    return undefined;
  }
}

/** True for any phasekit error (from this or another copy of the package); narrows to `code` when given. */
export function isWorkflowError<C extends WorkflowErrorCode>(value: unknown, code?: C): value is WorkflowError & { code: C } {
  if (typeof value !== "object" || value === null) return false;
  const v = value as { name?: unknown; code?: unknown };
  return v.name === "WorkflowError" && typeof v.code === "string" && (code === undefined || v.code === code);
}

/** Builds a `WorkflowError` whose message starts with where it comes from: `[phasekit] [scope] message`. */
export function workflowError(
  scope: string,
  code: WorkflowErrorCode,
  message: string,
  details: WorkflowErrorDetails = {},
  cause?: unknown,
): WorkflowError {
  return new WorkflowError(code, scopedMessage(scope, message, details.hint), details, cause === undefined ? undefined : { cause });
}

/** The one message format of phasekit's errors and refusals: `[phasekit] [scope] message Fix: hint`. */
export function scopedMessage(scope: string, message: string, hint: string | undefined): string {
  return `[phasekit] [${scope}] ${message}${hint ? ` Fix: ${hint}` : ""}`;
}

/** The outcome of anything that can be refused: the value, or a typed error. Never both. */
export type Result<T, E = WorkflowError> = ({ ok: true } & T) | { ok: false; error: E };
