/**
 * What the pi extension's durable side offers (durable-runs.ts builds it): runs that outlive their session, each
 * run's state also written to its plan folder or store while the session holds the run's lock.
 */
import type { BudgetUsage } from "@phasekit/core";
import type { ControlRequest, ControlSignal } from "../store/control-signals.js";
import type { ControlRequestInput } from "../store/control-fs.js";
import type { PlanStore } from "../store/plan-store.js";
import type { PinnedData } from "../run/definitions-pin.js";
import type { WorkflowState } from "./core-bridge.js";
import type { HeldBudget, PiRunCounts } from "./durable-budget.js";

/** Where plan folders live: `planRoot` relative to the session's cwd (default `ai_plan`), or off. */
export interface DurableOptions {
  readonly planRoot?: string | false | undefined;
  readonly homeDir?: string | undefined;
  /** The plan store for a session's cwd (e.g. `@phasekit/store-postgres`); default the fs store under `planRoot`. */
  readonly store?: ((cwd: string) => PlanStore) | undefined;
}

/**
 * The outcome of a durable operation: ok, or a message for the user. `elsewhere` when another live holder drives
 * the run (this session may show it but not move it); `failed` when the plan folder itself is unusable (the
 * message names the file and the fix; the session keeps the run in its own entries).
 */
export type DurableResult<T = object> = ({ ok: true } & T) | { ok: false; kind: "elsewhere" | "failed"; message: string };

/** The plan-folder side of the pi extension: at most one run held at a time. */
export interface DurableRuns {
  readonly enabled: boolean;
  /** The slug of the run this session holds, if any. */
  heldSlug(): string | undefined;
  /** Takes the lock of a run (new or resumed in this session) and writes its state. */
  claim(cwd: string, state: WorkflowState, now: number): Promise<DurableResult>;
  /** Writes the held run's state; a finished and notified run is written, then its lock released. */
  write(state: WorkflowState, now: number): Promise<DurableResult>;
  /** Reads run `id` under its lock and keeps holding it. */
  resume(cwd: string, id: string): Promise<DurableResult<{ state: WorkflowState }>>;
  /**
   * Records `data` (the definitions the held run goes on with) in the run's history, as the reserved entry
   * `phasekit:pi-definitions` keyed by the fingerprints `state` records: any session that resumes the run finds them.
   */
  savePin(state: WorkflowState, data: PinnedData, now: number): Promise<DurableResult>;
  /** The definitions recorded for the fingerprints `state` records, from the held run's history; undefined if none. */
  loadPin(state: WorkflowState, now: number): Promise<unknown>;
  /** Lets the held run go (session end, replaced run). */
  release(): Promise<void>;
  /**
   * The held run's pending pause/stop request (filed by `phasekit pause/stop`; a stop first), or null; with
   * `signal`, only that one's (e.g. `approve`). A read the store fails gives null and, when the held run's reads
   * start failing (not again until they read again), a `warning` for the user naming the error.
   */
  pendingControl(signal?: ControlSignal): Promise<{ request: ControlRequest | null; warning?: string }>;
  /**
   * Clears a request this session honoured (only if it is still that very request) and journals it; a clear or
   * journal line the store failed is a warning for the user in the result, never dropped.
   */
  clearControl(request: ControlRequest): Promise<readonly string[]>;
  /**
   * Takes a pending request before acting on it (`takeRequest`): `request` null when it was withdrawn or replaced
   * meanwhile, or could not be taken (the store failed, or this session lost the run: the lock's signal reports
   * that, and a pause it had taken is filed again for the new holder); the request is then not acted on here.
   * `failed` when this session took it, lost the run, and the store refused to file it again: it is pending
   * nowhere, and the message says so for the user (the request, the refusal, how to file it again). A take the
   * store failed (not a lost lock) gives null and, when it starts failing, a `warning` for the user naming the error.
   */
  takeControl(request: ControlRequest): Promise<DurableResult<{ request: ControlRequest | null; warning?: string }>>;
  /**
   * Files a request for the held run through its store (`/workflow-approve`'s decision), under the store's one
   * filing rule, as `phasekit approve` does; `failed` when no run is held or the store refuses (its message).
   * With `watched`, for run `watched.slug` when this session does not hold it (another process drives it and
   * takes the request): filed through a store opened for `watched.cwd`, as from any other process.
   */
  requestControl(signal: ControlSignal, input: ControlRequestInput, watched?: { cwd: string; slug: string }): Promise<DurableResult<{ request: ControlRequest }>>;
  /**
   * What run `taskId` has spent by its history (durable-budget.ts), the one record of it, when this session holds
   * the run; undefined when it does not (no plan folder, an unusable one, or another session drives the run).
   */
  budget(taskId: string): HeldBudget | undefined;
  /** Records what run `taskId` has spent (and pi's `counts`) in its history (when it changed and this session holds the run). */
  recordBudget(taskId: string, used: BudgetUsage, now: number, counts?: PiRunCounts): Promise<void>;
}
