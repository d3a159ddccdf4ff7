/**
 * Runs that outlive their session: each run's state is also written to its plan folder (`<planRoot>/<taskId>/
 * workflow.json`, compare-and-set, journaled) while the session holds the run's lock. `/workflow-resume <id>`
 * in another session reads it back under the lock, so two sessions never drive one run at once: the second is
 * refused with the holder's name.
 */
import { setImmediate as nextTick } from "node:timers";
import type { WorkflowError } from "@phasekit/core";
import type { ControlRequest, ControlSignal } from "../store/control-signals.js";
import type { ControlRequestInput } from "../store/control-fs.js";
import type { PlanStore, StoreLock } from "../store/plan-store.js";
import { isLive, toPersisted, type WorkflowState } from "./core-bridge.js";
import { failed } from "./durable-failure.js";
import { loadPinFrom, savePinIn } from "./durable-pin.js";
import { loadBudgetTotal, saveBudgetTotal, type PiRunCounts, type RecordedRun } from "./durable-budget.js";
import type { BudgetUsage } from "@phasekit/core";
import type { PinnedData } from "../run/definitions-pin.js";
import { takeRequest } from "../run/control-requests.js";

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

interface Held {
  store: PlanStore;
  slug: string;
  lock: StoreLock;
  generation: number | null;
  createdAt: string;
  /** The state last written (its generation and notified flag): writing it again would change nothing. */
  wrote?: string;
  /** The budget total last recorded in the run's history (read when the run was taken). */
  budget: RecordedRun | null;
}

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
  /** The held run's pending pause/stop request (filed by `phasekit pause/stop`; a stop first), or null; with `signal`, only that one's (e.g. `approve`). */
  pendingControl(signal?: ControlSignal): Promise<ControlRequest | null>;
  /** Clears a request this session honoured (only if it is still that very request). */
  clearControl(request: ControlRequest): Promise<void>;
  /** Takes a pending request before acting on it (`takeRequest`): null when it was withdrawn or replaced meanwhile. */
  takeControl(request: ControlRequest): Promise<ControlRequest | null>;
  /**
   * Files a request for the held run through its store (`/workflow-approve`'s decision), under the store's one
   * filing rule, as `phasekit approve` does; `failed` when no run is held or the store refuses (its message).
   * With `watched`, for run `watched.slug` when this session does not hold it (another process drives it and
   * takes the request): filed through a store opened for `watched.cwd`, as from any other process.
   */
  requestControl(signal: ControlSignal, input: ControlRequestInput, watched?: { cwd: string; slug: string }): Promise<DurableResult<{ request: ControlRequest }>>;
  /** What the held run `taskId` had spent by its history when this session took it (durable-budget.ts), if anything. */
  budgetTotal(taskId: string): RecordedRun["total"] | undefined;
  /** pi's phase and progress counts of the held run `taskId` as its history last recorded them, if any. */
  budgetCounts(taskId: string): PiRunCounts | undefined;
  /** Records what run `taskId` has spent (and pi's `counts`) in its history (when it changed and this session holds the run). */
  recordBudget(taskId: string, used: BudgetUsage, now: number, counts?: PiRunCounts): Promise<void>;
}

const TOOL = "pi";

// node:timers' own setImmediate, not the global one: a host (or a test) that fakes the global timers must not
// stall the run's claim, which every move awaits.
function nextTurn(): Promise<void> {
  return new Promise((resolve) => nextTick(resolve));
}

/** Creates the durable side; `planRoot: false` turns it off (session entries only). */
export function createDurableRuns(options: DurableOptions, readState: (raw: unknown) => { ok: true; state: WorkflowState } | { ok: false; error: { message: string } }): DurableRuns {
  let held: Held | undefined;
  const enabled = options.planRoot !== false;
  // The fs store (the run log, locks) is loaded on first use, not with the extension: pi's start-up does not pay
  // for it, and session_start's claim runs in the background.
  const storeFor = async (cwd: string): Promise<PlanStore> => {
    const given = options.store?.(cwd);
    if (given !== undefined) return given;
    const { createFsPlanStore } = await import("../store/plan-store.js");
    return createFsPlanStore({ repoRoot: cwd, planRoot: typeof options.planRoot === "string" ? options.planRoot : undefined, homeDir: options.homeDir });
  };
  const openStore = async (cwd: string): Promise<DurableResult<{ store: PlanStore }>> => {
    try {
      return { ok: true, store: await storeFor(cwd) };
    } catch (error) {
      const said = (error as { message?: unknown }).message;
      return { ok: false, kind: "failed", message: `[phasekit] could not open the plan folder: ${typeof said === "string" ? said : String(error)}. Until then the run is kept in this session only.` };
    }
  };

  async function lockRun(store: PlanStore, slug: string): Promise<DurableResult<{ lock: StoreLock }>> {
    let got;
    try {
      got = await store.lock(slug, { owner: { tool: TOOL } });
    } catch (error) {
      return failed(store, slug, error as WorkflowError);
    }
    if (got.ok) return { ok: true, lock: got.lock };
    if (got.error.code === "LOCKED") {
      const holder = await liveHolder(store, slug, got.error);
      if (holder !== undefined) return { ok: false, kind: "elsewhere", message: `[phasekit] run ${slug} is being driven elsewhere, by ${holder}.` };
    }
    return failed(store, slug, got.error);
  }

  /**
   * Who holds the run, when that holder is alive by the one liveness rule (lock/liveness.ts). A store other than
   * the fs one judges its own leases: its LOCKED is that verdict, and its message names the holder.
   */
  async function liveHolder(store: PlanStore, slug: string, error: WorkflowError): Promise<string | undefined> {
    if (options.store !== undefined) return error.message;
    const [{ judgeLiveness }, { describeHolder }] = await Promise.all([import("../lock/liveness.js"), import("../lock/holder.js")]);
    const seen = await judgeLiveness(await store.runDir(slug)).catch(() => undefined);
    return seen?.verdict === "live" ? describeHolder(seen.holder) : undefined;
  }

  async function writeHeld(h: Held, state: WorkflowState, now: number): Promise<DurableResult> {
    // A session change re-claims the run it already holds: skip the write when that very state is on disk.
    const key = `${state.generation}:${state.status}:${state.completionNotified}`;
    if (h.wrote === key) return { ok: true };
    const iso = new Date(now).toISOString();
    const r = await h.store.writeMetadata(
      h.slug,
      { slug: h.slug, ownerTool: TOOL, currentTool: TOOL, status: state.status, createdAt: h.createdAt, updatedAt: iso, state: toPersisted(state) },
      h.generation,
    );
    if (!r.ok) return failed(h.store, h.slug, r.error, "could not write");
    h.generation = r.metadata.generation;
    h.wrote = key;
    return { ok: true };
  }

  const inner: DurableRuns = {
    enabled,
    heldSlug: () => held?.slug,
    async claim(cwd, state, now) {
      if (!enabled) return { ok: true };
      if (held?.slug === state.taskId) return inner.write(state, now);
      await inner.release();
      const opened = await openStore(cwd);
      if (!opened.ok) return opened;
      const store = opened.store;
      const locked = await lockRun(store, state.taskId);
      if (!locked.ok) return locked;
      const meta = await store.readMetadata(state.taskId);
      const generation = meta.ok && meta.metadata !== null ? meta.metadata.generation : null;
      const createdAt = meta.ok && meta.metadata !== null ? meta.metadata.createdAt : new Date(state.startedAt).toISOString();
      // Writes go through the lease (lock.store): fencing belongs to this acquisition, not to the store object.
      const leased = locked.lock.store ?? store;
      held = { store: leased, slug: state.taskId, lock: locked.lock, generation, createdAt, budget: await loadBudgetTotal(leased, state.taskId, now) };
      return inner.write(state, now);
    },
    async write(state, now) {
      const h = held;
      if (!enabled || h === undefined || h.slug !== state.taskId) return { ok: true };
      const r = await writeHeld(h, state, now);
      // Keep the lock until the end is also notified, so that flag reaches the plan folder too.
      if (!isLive(state) && state.completionNotified) await inner.release();
      return r;
    },
    async resume(cwd, id) {
      if (!enabled) return { ok: false, kind: "failed", message: "[phasekit] plan folders are turned off (planRoot: false); nothing to resume from." };
      if (held?.slug === id) return { ok: false, kind: "failed", message: `[phasekit] run ${id} is already driven by this session.` };
      // A session that only shows this run (another one held it at start) may take it over now.
      const opened = await openStore(cwd);
      if (!opened.ok) return opened;
      const store = opened.store;
      let meta;
      try {
        meta = await store.readMetadata(id);
      } catch (error) {
        return failed(store, id, error as WorkflowError, "could not read");
      }
      if (!meta.ok) return failed(store, id, meta.error, "could not read");
      if (meta.metadata === null || meta.metadata.state === undefined) return { ok: false, kind: "failed", message: `[phasekit] no workflow run ${id} in ${store.planRoot}.` };
      const st = readState(meta.metadata.state);
      if (!st.ok) return { ok: false, kind: "failed", message: `[phasekit] run ${id} has an unreadable state: ${st.error.message}` };
      if (!isLive(st.state)) return { ok: false, kind: "failed", message: `[phasekit] run ${id} has already ended (${st.state.status}).` };
      await inner.release();
      const locked = await lockRun(store, id);
      if (!locked.ok) return locked;
      // Read again under the lock: the holder we waited for may have moved the run on.
      const again = await store.readMetadata(id);
      const fresh = again.ok && again.metadata?.state !== undefined ? readState(again.metadata.state) : st;
      const state = fresh.ok ? fresh.state : st.state;
      const leased = locked.lock.store ?? store;
      const budget = await loadBudgetTotal(leased, id, Date.now());
      held = { store: leased, slug: id, lock: locked.lock, generation: again.ok && again.metadata ? again.metadata.generation : meta.metadata.generation, createdAt: meta.metadata.createdAt, budget };
      return { ok: true, state };
    },
    async pendingControl(signal) {
      const h = held;
      if (h === undefined) return null;
      const r = await h.store.readControl(h.slug, signal).catch(() => undefined);
      return r?.ok ? r.request : null;
    },
    takeControl: async (request) => (held === undefined ? null : takeRequest(held.store, held.slug, request, held.lock).catch(() => null)),
    async clearControl(request) {
      const h = held;
      if (h === undefined) return;
      await h.store.clearControl(h.slug, request).catch(() => undefined);
      await h.store.appendJournal(h.slug, { generation: h.generation ?? 0, at: new Date().toISOString(), event: `control-${request.signal}`, data: { reason: request.reason, by: "pi" } }).catch(() => undefined);
    },
    async requestControl(signal, input, watched) {
      const h = held;
      const file = async (store: PlanStore, slug: string): Promise<DurableResult<{ request: ControlRequest }>> => {
        const r = await store.requestControl(slug, signal, input).catch((error: unknown) => ({ ok: false as const, error: error as WorkflowError }));
        return r.ok ? { ok: true, request: r.request } : failed(store, slug, r.error, `could not file the ${signal} request in`);
      };
      if (h !== undefined && (watched === undefined || watched.slug === h.slug)) return file(h.store, h.slug);
      if (watched === undefined || !enabled) return { ok: false, kind: "failed", message: "[phasekit] this session holds no run." };
      const opened = await openStore(watched.cwd);
      if (!opened.ok) return opened;
      try {
        return await file(opened.store, watched.slug);
      } finally {
        await opened.store.close().catch(() => undefined);
      }
    },
    budgetTotal: (taskId) => (held?.slug === taskId ? held.budget?.total : undefined),
    budgetCounts: (taskId) => (held?.slug === taskId ? held.budget?.pi : undefined),
    async recordBudget(taskId, used, now, counts) {
      const h = held;
      if (h !== undefined && h.slug === taskId) h.budget = await saveBudgetTotal(h.store, h.slug, h.budget, used, now, counts);
    },
    async savePin(state, data, now) {
      const h = held;
      if (!enabled || h === undefined || h.slug !== state.taskId) return { ok: true };
      const r = await savePinIn(h.store, h.slug, state, data, now);
      return r.ok ? r : failed(h.store, h.slug, r.error as WorkflowError, "could not record the pinned definitions in");
    },
    async loadPin(state, now) {
      const h = held;
      return h === undefined || h.slug !== state.taskId ? undefined : loadPinFrom(h.store, h.slug, state, now);
    },
    async release() {
      const h = held;
      held = undefined;
      if (h === undefined) return;
      await h.lock.release().catch(() => undefined);
      await h.store.close().catch(() => undefined);
    },
  };
  // One operation at a time, in call order: session_start leaves the claim running in the background, and
  // whatever comes next (a write, a release at shutdown, a resume) waits for it instead of racing it.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const p = queue.then(fn, fn);
    queue = p.catch(() => undefined);
    return p;
  };
  const api: DurableRuns = {
    enabled,
    heldSlug: () => held?.slug,
    // A claim starts on the next turn of the event loop: its first part (store, folder checks) is synchronous,
    // and session_start, which does not wait for it, returns to pi first.
    claim: (cwd, state, now) => serial(() => nextTurn().then(() => inner.claim(cwd, state, now))),
    write: (state, now) => serial(() => inner.write(state, now)),
    resume: (cwd, id) => serial(() => inner.resume(cwd, id)),
    pendingControl: (signal) => serial(() => inner.pendingControl(signal)),
    clearControl: (request) => serial(() => inner.clearControl(request)),
    takeControl: (request) => serial(() => inner.takeControl(request)),
    requestControl: (signal, input, watched) => serial(() => inner.requestControl(signal, input, watched)),
    budgetTotal: (taskId) => inner.budgetTotal(taskId),
    budgetCounts: (taskId) => inner.budgetCounts(taskId),
    recordBudget: (taskId, used, now, counts) => serial(() => inner.recordBudget(taskId, used, now, counts)),
    savePin: (state, data, now) => serial(() => inner.savePin(state, data, now)),
    loadPin: (state, now) => serial(() => inner.loadPin(state, now)),
    release: () => serial(() => inner.release()),
  };
  return api;
}
