/**
 * What a `ctx.step` call may ask for beyond its id and input: a timeout, retries with exponential back-off, and
 * the types that keep step outputs JSON. Also the stop watcher that aborts in-flight steps when another process
 * sends a stop, instead of waiting for the next step boundary.
 */
import { isWorkflowError, workflowError, type WorkflowError } from "@phasekit/core";
import type { JsonChecked, JsonForm } from "../io/json-type.js";
import type { PlanStore } from "../store/plan-store.js";

/**
 * What a step may return, as the runner sees it: any value. The compiler's check is `StepBody` (every field plain
 * JSON, or nothing at all); the runtime one is `assertPlainJson` when the output is stored.
 */
export type StepValue = unknown;
/** What `ctx.step` resolves with: the JSON form of what the step returned (nothing becomes null). */
export type StepResult<T> = JsonForm<T>;
/** A step body: gets the step's signal and its attempt number (1-based). */
export type StepFn<T> = (signal: AbortSignal, attempt: number) => T | Promise<T>;
/**
 * `T` when it is plain JSON field by field (interfaces, readonly arrays and phasekit's own types included), or
 * nothing; else its shape with each offending field replaced by a message naming it (`✗ output.when is a Date…`).
 */
export type StepOutput<T> = JsonChecked<T, "output", true>;
/**
 * The `fn` of `ctx.step`: `T` is inferred from the first half, the second (NoInfer) refuses a `T` whose JSON form
 * is not itself, and the compiler's message names the field.
 */
export type StepBody<T> = StepFn<T> & StepFn<NoInfer<StepOutput<T>>>;

/** Options of one `ctx.step` call. */
export interface StepOptions {
  /** Abort the step's signal and fail the attempt with STEP_TIMEOUT after this many ms (0 = no limit, the default). */
  timeoutMs?: number | undefined;
  /** Further attempts inside this run after a failure (default 0); each is recorded and counts toward maxAttempts. */
  retries?: number | undefined;
  /** Wait before the first retry (default 200 ms); doubles each retry, capped by `maxBackoffMs` (default 30 s). */
  backoffMs?: number | undefined;
  maxBackoffMs?: number | undefined;
}

/** Validates the options (INVALID_OPTIONS naming the field) and fills in the defaults. */
export function checkStepOptions(id: string, o: StepOptions): Required<StepOptions> {
  const out = { timeoutMs: o.timeoutMs ?? 0, retries: o.retries ?? 0, backoffMs: o.backoffMs ?? 200, maxBackoffMs: o.maxBackoffMs ?? 30_000 };
  for (const [field, value] of Object.entries(out)) {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw workflowError("run", "INVALID_OPTIONS", `step ${id}: option ${field} is invalid: ${String(value)}.`, { field, value, hint: "pass an integer ≥ 0" });
    }
  }
  return out;
}

// Failures a retry cannot fix (or that must end the run now) are never retried.
const FINAL = new Set(["LOCK_LOST", "RUN_STOPPED", "RUN_PAUSED", "UNSAFE_FILE", "FILE_TOO_LARGE", "CORRUPT_FILE", "UNSERIALIZABLE", "MAX_ATTEMPTS_REACHED", "INVALID_OPTIONS"]);

/** True when another attempt could succeed. */
export function retryable(error: unknown): boolean {
  return !(isWorkflowError(error) && FINAL.has(error.code));
}

/** Polls for a stop request while steps are in flight and aborts their signals when one arrives. */
export interface StopWatch {
  /** Called when a step starts running: begins polling if it is not already. */
  start(): void;
  /** The RUN_STOPPED error once a stop was seen, else null. */
  stopped(): WorkflowError | null;
}

const POLL_MS = 250;

/** The stop watcher of one run context. */
export function createStopWatch(deps: { slug: string; store: Pick<PlanStore, "readControl"> }, inFlight: ReadonlyMap<string, AbortController>): StopWatch {
  let timer: NodeJS.Timeout | undefined;
  let seen: WorkflowError | null = null;
  let polling = false;
  const poll = async () => {
    if (polling || seen !== null) return;
    polling = true;
    try {
      const r = await deps.store.readControl(deps.slug);
      if (r.ok && r.request?.signal === "stop") {
        seen = workflowError("run", "RUN_STOPPED", `run ${deps.slug}: stop requested (${r.request.reason}).`, {
          value: "stop",
          reason: r.request.reason,
          requestedBy: r.request.requestedBy,
          request: r.request,
        });
        for (const c of inFlight.values()) c.abort(seen);
      }
    } finally {
      polling = false;
    }
  };
  return {
    start() {
      if (timer !== undefined) return;
      // The interval ends itself at its first tick with no step in flight, not when each step settles: steps in a
      // row then share one timer instead of each making and clearing its own.
      timer = setInterval(() => {
        if (inFlight.size > 0) return void poll();
        clearInterval(timer);
        timer = undefined;
      }, POLL_MS);
      timer.unref();
    },
    stopped: () => seen,
  };
}
