/**
 * A tiny in-memory PlanStore: proof that another backend fits the interface and passes the contract suite
 * without callers changing. Not durable, single-process, for tests only. Its lock is a lease with an epoch, as on
 * the other stores: a holder writes through `lock.store`, fenced by its own lease; a store object without the
 * run's lease reads its checkpoints and writes none of them. `reopen()` gives a second store object over the same
 * runs (another process, in effect).
 */
import { workflowError, type WorkflowError } from "@phasekit/core";
import { checkJournalAppend, journalAfter, METADATA_EVENT, type JournalAppend, type JournalEntry } from "../store/journal.js";
import { validateSlug } from "../io/plan-paths.js";
import type { PlanRunEntry, PlanStore, StoreLock } from "../store/plan-store.js";
import type { CheckpointStore } from "../engine/checkpoint-port.js";
import { createMemoryCheckpoints } from "./memory-checkpoints.js";
import { memoryGc } from "./memory-gc.js";
import { claimEpoch, newMemoryHistory, type MemoryHistory } from "./memory-history.js";
import { fingerprintOfCanonical } from "../engine/fingerprint.js";
import { notHeld } from "../store/read-checkpoints.js";
import { buildDocument, slugMismatch, validateMetadata } from "../store/metadata.js";
import type { WorkflowMetadata, WorkflowMetadataInput } from "../store/metadata-schema.js";
import { approvalMismatch, newControlRequest, withdrawRefusal, type ControlRequest, type ControlSignal } from "../store/control-signals.js";
import { controlRefusal } from "../store/control-fs.js";
import { refreshClock } from "../lock/heartbeat.js";
import { DEFAULT_LOCK_STALE_MS } from "../lock/holder.js";
import { closedLeaseError, releasedLeaseError } from "../lock/errors.js";
import { endMemoryLease, leaseLive, newMemoryLease, renewMemoryLease, stallMemoryLease, type MemoryClock, type MemoryLease as Lease } from "./memory-lease.js";

interface Run {
  text: string | null;
  journal: JournalEntry[];
  holder: Lease | null;
  /** Raised by every acquisition. */
  epoch: number;
  history: MemoryHistory;
  control: Partial<Record<ControlSignal, ControlRequest>>;
}

/** The memory store, with what the contract suite needs to play other processes and stalls. */
export interface MemoryPlanStore extends PlanStore {
  /** A second store object over the same runs, holding none of this one's leases. */
  reopen(): MemoryPlanStore;
  /**
   * The lease on `slug` runs out as a stalled holder's does: the next `lock()` takes the run; the holder has not
   * noticed. If nobody takes it, the holder's next check or write renews it, as on the other stores.
   */
  expireLock(slug: string): void;
}

/** Options of `createMemoryPlanStore`. */
export interface MemoryPlanStoreOptions {
  /**
   * The clock leases are judged by (default the system's): a lease not renewed for its `staleMs` by either clock
   * has run out, as on the fs and PostgreSQL stores. A test moves it to play a stall or a suspend.
   */
  clock?: MemoryClock;
}

/** Creates an empty in-memory store. */
export function createMemoryPlanStore(options: MemoryPlanStoreOptions = {}): MemoryPlanStore {
  return memoryStoreOver(new Map(), options.clock ?? refreshClock);
}

/** A store object over `runs` (`reopen()` shares them and the clock). */
function memoryStoreOver(runs: Map<string, Run>, clock: MemoryClock): MemoryPlanStore {
  // The latest lease this store object took per run: the plain store writes through it, as the fs store does.
  const mine = new Map<string, Lease>();
  // Every lease this store object took, and those its close() gave up (the store may be used again after).
  const taken = new Set<Lease>();
  const givenUp = new WeakSet<Lease>();
  const runOf = (slug: string): Run => {
    const v = validateSlug(slug);
    if (!v.ok) throw v.error;
    let r = runs.get(slug);
    if (r === undefined) runs.set(slug, (r = { text: null, journal: [], holder: null, epoch: 0, history: newMemoryHistory(), control: {} }));
    return r;
  };
  // Readers never write: an unknown run reads as an empty one that is not kept (so `list()` never shows it).
  const peek = (slug: string): Run => {
    const v = validateSlug(slug);
    if (!v.ok) throw v.error;
    return runs.get(slug) ?? { text: null, journal: [], holder: null, epoch: 0, history: newMemoryHistory(), control: {} };
  };
  const lost = (slug: string, lease: Lease, what: string, hint = "another holder has the run now"): WorkflowError =>
    workflowError("store", "LOCK_LOST", `run ${slug}: the lease of epoch ${lease.epoch} is lost (${what})`, { value: lease.epoch, hint });
  // A lease is live by the rule of every store; one that ran out may be taken by the next lock.
  const live = (run: Run): boolean => run.holder !== null && leaseLive(run.holder, clock);
  // The holder acting proves it awake: the renewal the other stores await lands unless another lock took the run,
  // or gc removed it while the lease had run out (on fs and PostgreSQL the lock goes with the run).
  const held = (slug: string, run: Run, lease: Lease, what: string): WorkflowError | undefined => {
    if (givenUp.has(lease)) return closedLeaseError("store", slug, lease.epoch);
    if (lease.released) return releasedLeaseError("store", slug, lease.epoch);
    if (runs.get(slug) !== run) return lost(slug, lease, "gc removed the run while its lease had run out", "the run is gone; start it again if it should go on");
    if (run.holder !== lease) return lost(slug, lease, what);
    renewMemoryLease(lease, clock);
    return undefined;
  };
  // Without a lease, a write would race the live holder (as on the fs store): refused while one holds the run.
  const lockedOut = (slug: string, run: Run): WorkflowError | undefined =>
    run.holder !== null && live(run) ? workflowError("store", "LOCKED", `run ${slug} is locked by ${run.holder.tool}`, { value: { tool: run.holder.tool } }) : undefined;
  // Who may write the run's history: the lease that holds it; nobody without one.
  const mayWrite = (slug: string, run: Run, lease: Lease | undefined) => (what: string): void => {
    if (lease === undefined) throw notHeld(slug, `memory:${slug}/checkpoints`, what);
    const refused = held(slug, run, lease, what);
    if (refused !== undefined) throw refused;
  };
  const checkpointsVia = async (lease: Lease | undefined, slug: string): Promise<CheckpointStore> => {
    const run = lease === undefined ? peek(slug) : runOf(slug);
    return createMemoryCheckpoints(slug, run.history, run, lease?.epoch ?? null, mayWrite(slug, run, lease));
  };
  const current = (slug: string, run: Run): { ok: true; metadata: WorkflowMetadata | null } | { ok: false; error: WorkflowError } => {
    if (run.text === null) return { ok: true, metadata: null };
    return validateMetadata(`memory:${slug}`, JSON.parse(run.text));
  };
  const guard = async <T>(fn: () => T | Promise<T>): Promise<T | { ok: false; error: WorkflowError }> => {
    try {
      return await fn();
    } catch (error) {
      return { ok: false, error: error as WorkflowError };
    }
  };
  const writeMetadataVia = (lease: Lease | undefined, slug: string, next: WorkflowMetadataInput, expectedGeneration: number | null): ReturnType<PlanStore["writeMetadata"]> =>
    guard(() => {
      const run = runOf(slug);
      const mismatch = slugMismatch(slug, next);
      if (mismatch !== undefined) return { ok: false as const, error: mismatch };
      const refused = lease === undefined ? lockedOut(slug, run) : held(slug, run, lease, "writing the metadata");
      if (refused !== undefined) return { ok: false as const, error: refused };
      const cur = current(slug, run);
      if (!cur.ok) return cur;
      const found = cur.metadata?.generation ?? null;
      if (found !== expectedGeneration) {
        return { ok: false as const, error: workflowError("store", "STALE_GENERATION", `expected ${String(expectedGeneration)}, found ${String(found)}`, { value: found }) };
      }
      const built = buildDocument(`memory:${slug}`, next, (expectedGeneration ?? 0) + 1);
      if (!built.ok) return built;
      run.text = built.text;
      run.journal.push({ seq: run.journal.length + 1, generation: built.metadata.generation, at: built.metadata.updatedAt, event: METADATA_EVENT, data: built.metadata });
      return { ok: true as const, metadata: built.metadata };
    });
  // A journal line is a history entry: fenced like every other write of the run.
  const appendJournalVia = (lease: Lease | undefined, slug: string, entry: JournalAppend): ReturnType<PlanStore["appendJournal"]> =>
    guard(() => {
      const checked = checkJournalAppend(slug, entry);
      if (!checked.ok) return checked;
      const run = runOf(slug);
      const refused = lease === undefined ? lockedOut(slug, run) : held(slug, run, lease, "appending to the journal");
      if (refused !== undefined) return { ok: false as const, error: refused };
      const full = { ...checked.entry, seq: run.journal.length + 1 };
      run.journal.push(full);
      return { ok: true as const, entry: full };
    });
  /** The lock of one lease; its `store` writes to the run through this lease only. */
  const leaseLock = (slug: string, run: Run, lease: Lease): StoreLock => {
    const own = <R>(other: string, here: () => R, elsewhere: () => R): R => (other === slug ? here() : elsewhere());
    const bound: PlanStore = {
      ...store,
      writeMetadata: (s, next, expected) => own(s, () => writeMetadataVia(lease, s, next, expected), () => store.writeMetadata(s, next, expected)),
      appendJournal: (s, entry) => own(s, () => appendJournalVia(lease, s, entry), () => store.appendJournal(s, entry)),
      checkpoints: (s, opts) => own(s, () => checkpointsVia(lease, s), () => store.checkpoints(s, opts)),
    };
    return {
      signal: lease.controller.signal,
      store: bound,
      async assertHeld() {
        const refused = held(slug, run, lease, "another lock took the run");
        if (refused !== undefined) throw refused;
      },
      async release() {
        if (mine.get(slug) === lease) mine.delete(slug);
        taken.delete(lease);
        endMemoryLease(lease);
        // Released by its holder, held or taken: its later writes and checks say so (releasedLeaseError).
        lease.released = true;
        if (run.holder !== lease) return { ok: true, released: false };
        run.holder = null;
        return { ok: true, released: true };
      },
    };
  };

  const store: MemoryPlanStore = {
    planRoot: "memory:",
    async runDir(slug) {
      runOf(slug);
      return `memory:${slug}`;
    },
    readMetadata: (slug) => guard(() => current(slug, peek(slug))),
    writeMetadata: (slug, next, expectedGeneration) => writeMetadataVia(mine.get(slug), slug, next, expectedGeneration),
    readJournal: (slug, options) =>
      guard(() => {
        const after = journalAfter(options);
        return { ok: true as const, entries: peek(slug).journal.filter((e) => e.seq > after), torn: false, tornBytes: 0 };
      }),
    appendJournal: (slug, entry) => appendJournalVia(mine.get(slug), slug, entry),
    lock: (slug, options) =>
      guard(() => {
        const run = runOf(slug);
        const previous = run.holder;
        if (previous !== null && live(run)) {
          return { ok: false as const, error: workflowError("store", "LOCKED", `run ${slug} is locked by ${previous.tool}`, { holder: previous.tool }) };
        }
        // The entry port's claim, in the same turn as the check: only a granted lock claims an epoch.
        const epoch = claimEpoch(run);
        const lease: Lease = newMemoryLease(options.owner.tool, epoch, options.staleMs ?? DEFAULT_LOCK_STALE_MS, clock, () => run.holder === lease && runs.get(slug) === run && !givenUp.has(lease));
        run.holder = lease;
        mine.set(slug, lease);
        taken.add(lease);
        // The displaced holder's signal says so (its heartbeat would); its writes are refused whether it looks or not.
        if (previous !== null) endMemoryLease(previous);
        previous?.controller.abort(lost(slug, previous, "holding the run"));
        return { ok: true as const, lock: leaseLock(slug, run, lease) };
      }),
    async list() {
      const out: PlanRunEntry[] = [];
      for (const slug of [...runs.keys()].sort()) {
        const r = current(slug, runs.get(slug) as Run);
        out.push(r.ok ? { slug, ok: true, metadata: r.metadata } : { slug, ok: false, error: r.error });
      }
      return out;
    },
    // Through this store object's lease on the run, if it holds one; else a reader's view.
    checkpoints: (slug) => checkpointsVia(mine.get(slug), slug),
    async readStepOutput(slug, record) {
      const fp = record.outputFingerprint;
      const text = fp === undefined ? undefined : runs.get(slug)?.history.blobs.get(fp);
      if (fp === undefined || text === undefined) return { ok: false, reason: "missing", message: `run ${slug} holds no output of ${record.stepId}` };
      return fingerprintOfCanonical(text) === fp ? { ok: true, text } : { ok: false, reason: "corrupt", message: `the stored output of ${record.stepId} does not match its fingerprint` };
    },
    gc: (options) =>
      memoryGc(
        [...runs].map(([slug, run]) => ({ slug, metadata: current(slug, run), live: live(run), steps: async () => (await checkpointsVia(undefined, slug)).records() })),
        options,
        (slug) => runs.delete(slug),
      ),
    requestControl: (slug, signal, input = {}) =>
      guard(async () => {
        const run = peek(slug);
        const cur = current(slug, run);
        if (!cur.ok) return cur;
        // The rule every store applies (codes and words alike); a holder whose lease expired runs nothing.
        const refused = await controlRefusal(slug, signal, cur.metadata?.status ?? null, `memory:${slug}`, async () => live(run));
        if (refused !== null) return { ok: false as const, error: refused };
        const mismatch = approvalMismatch(slug, signal, input.approval);
        if (mismatch !== undefined) return { ok: false as const, error: mismatch };
        const request = newControlRequest(signal, input.reason ?? `${signal} requested`, input.now, undefined, input.approval);
        run.control[signal] = request;
        return { ok: true as const, request };
      }),
    readControl: (slug, signal) =>
      guard(() => {
        const c = peek(slug).control;
        return { ok: true as const, request: (signal === undefined ? (c.stop ?? c.pause) : c[signal]) ?? null };
      }),
    clearControl: (slug, request) =>
      guard(() => {
        const c = peek(slug).control;
        const same = JSON.stringify(c[request.signal]) === JSON.stringify(request);
        if (same) delete c[request.signal];
        return { ok: true as const, cleared: same };
      }),
    withdrawControl: (slug, request) =>
      guard(() => {
        const refused = withdrawRefusal(slug, request);
        if (refused !== undefined) return { ok: false as const, error: refused };
        const c = peek(slug).control;
        const same = JSON.stringify(c.pause) === JSON.stringify(request);
        if (same) delete c.pause;
        return { ok: true as const, withdrawn: same };
      }),
    // As PostgreSQL's close stops the heartbeat: the leases this object took are no longer renewed and run out
    // (another store object over the same runs may then take them), and every write under them is refused.
    async close() {
      for (const lease of taken) givenUp.add(lease);
      taken.clear();
      mine.clear();
    },
    reopen: () => memoryStoreOver(runs, clock),
    expireLock(slug) {
      const holder = runs.get(slug)?.holder;
      if (holder) stallMemoryLease(holder);
    },
  };
  return store;
}
