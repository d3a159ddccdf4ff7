/**
 * The `PlanStore` port on disk: `<planRoot>/<slug>/` holds the fenced run log (the truth: steps, outputs,
 * metadata generations), workflow.json (its readable view), the journal and the lock. Taking the lock claims the
 * run log's next epoch, which fences every earlier holder.
 */
import { settle } from "./settle.js";
import path from "node:path";
import type { WorkflowError } from "@phasekit/core";
import { cleanTempFiles, syncDir } from "../io/atomic-write.js";
import { assertRealDir } from "../io/safe-open.js";
import { nodeFs, type FsPort } from "../io/fs-port.js";
import { checkJournalAppend, journalAfter, type JournalAppend } from "./journal.js";
import { JOURNAL_EVENT, journalEventData, lastJournalSeq, readLegacyJournal, renderJournal, type LegacyJournal } from "./journal-view.js";
import { readRunLog } from "./run-log/reader.js";
import { abandonPlanLock, acquirePlanLock, type PlanLock } from "../lock/plan-lock.js";
import { judgeLiveness } from "../lock/liveness.js";
import { busyError, closedLeaseError, releasedLeaseError } from "../lock/errors.js";
import { DEFAULT_LOCK_STALE_MS, lockDirOf } from "../lock/holder.js";
import { checkpointsOverRunLog } from "./log-checkpoints.js";
import { readOnlyCheckpoints } from "./read-checkpoints.js";
import { readMetadataWithLog, readRunMetadata, renderMetadataView, writeMetadataWithLog } from "./log-metadata.js";
import { METADATA_FILE, type PlanStore, type StoreLock } from "./plan-store-port.js";
import { openRunLog, type RunLog } from "./run-log/run-log.js";
import { RUN_ARTIFACTS_DIR } from "./run-log/file-names.js";
import { gc } from "./retention.js";
import { listPlanRuns } from "./plan-runs.js";
import { ensurePrivateDir, resolveInsideWith, resolvePlanRoot, validateSlug } from "../io/plan-paths.js";
import { slugMismatch, type ReadMetadataResult } from "./metadata.js";
import { createFsControl } from "./control-fs.js";
import type { WorkflowMetadataInput } from "./metadata-schema.js";
import type { CheckpointStore } from "../engine/checkpoint-port.js";
import { checkStoredOutput } from "./run-steps.js";

export { METADATA_FILE } from "./plan-store-port.js";
export type { PlanStore, StoreLock, StoreLockOptions, PlanRunEntry, StoreGcOptions, StoreLeaseView, StoreRunFacts } from "./plan-store-port.js";

/** Options of `createFsPlanStore`. */
export interface FsPlanStoreOptions {
  repoRoot: string;
  /** See `resolvePlanRoot` (default `<repoRoot>/ai_plan`). */
  planRoot?: string | undefined;
  homeDir?: string | undefined;
  fs?: FsPort | undefined;
}

/** The plan folder on disk: `<planRoot>/<slug>/{workflow.json,journal.ndjson,.lock}`. Options are checked at once. */
export function createFsPlanStore(options: FsPlanStoreOptions): PlanStore {
  const planRoot = resolvePlanRoot(options);
  const fs = options.fs ?? nodeFs;
  // Each run's journal.ndjson of an earlier version, read once: nothing writes it any more.
  const legacyJournals = new Map<string, LegacyJournal>();
  const opened = new Set<string>();
  // Run logs this store has claimed, by run folder; the clock is the latest one a caller passed.
  const logs = new Map<string, Lease>();

  const dirOf = async (slug: string): Promise<string> => {
    const v = validateSlug(slug);
    if (!v.ok) throw v.error;
    return resolveInsideWith(fs, planRoot, [v.slug]);
  };
  // First touch of a run in this store: create its folder and clear temp files left by a crashed writer.
  const openRun = async (slug: string): Promise<string> => {
    const dir = await dirOf(slug);
    if (!opened.has(dir)) {
      await ensurePrivateDir(planRoot, { fs });
      const existed = await assertRealDir(fs, dir, "store");
      await ensurePrivateDir(dir, { fs });
      // A new run folder is only durable once the plan root's entry for it is on disk.
      if (!existed) await syncDir(fs, planRoot);
      await cleanTempFiles(dir, { fs });
      await cleanTempFiles(path.join(dir, RUN_ARTIFACTS_DIR), { fs });
      opened.add(dir);
    }
    return dir;
  };
  const legacyOf = async (dir: string): Promise<LegacyJournal> => {
    const known = legacyJournals.get(dir);
    if (known !== undefined) return known;
    const r = await readLegacyJournal(dir, fs);
    if (!r.ok) throw r.error;
    legacyJournals.set(dir, r.legacy);
    return r.legacy;
  };

  // A lease: one lock acquisition's run log (its epoch fences every earlier holder). `logs` maps a run folder to
  // the latest lease this store object took; a holder writes through its own lease (lock.store), so a holder
  // displaced by a later lease of the same store object is fenced by its own epoch, never handed the new one's log.
  const claim = (slug: string, dir: string, lock: PlanLock): Lease => {
    const clock = { now: Date.now };
    // A step's body starts only while the lock is still this lease's (free while its heartbeat is fresh).
    const log = openRunLog({ runDir: dir, now: () => clock.now(), beforeBody: () => lock.stillHolding() });
    const lease: Lease = { slug, dir, log, clock, lock };
    logs.set(dir, lease);
    log.catch(() => forget(lease));
    return lease;
  };
  const forget = (lease: Lease): void => {
    if (logs.get(lease.dir) === lease) logs.delete(lease.dir);
  };
  const release = async (lease: Lease): Promise<void> => {
    forget(lease);
    await lease.log.then((l) => l.close(lease.ended)).catch(() => undefined);
  };
  const readMetaOf = async (dir: string): Promise<ReadMetadataResult> => {
    const file = path.join(dir, METADATA_FILE);
    const held = logs.get(dir);
    if (held !== undefined) return readMetadataWithLog(file, fs, (await held.log).state());
    return readRunMetadata(file, fs);
  };

  // Every write goes into the run's fenced history: through the caller's lease, the store's, or (when nobody
  // holds the run) a lock taken for this one write. Refused while another process holds it: the write would
  // race the live holder's history (its next write would then fail STALE_GENERATION).
  const throughLease = async <R extends { ok: boolean }>(own: Lease | undefined, slug: string, dir: string, what: string, fn: (log: RunLog) => Promise<R | { ok: false; error: WorkflowError }>): Promise<R | { ok: false; error: WorkflowError }> => {
    const held = own ?? logs.get(dir);
    if (held !== undefined) return fn(await held.log);
    const lockState = { runDir: dir, lockDir: lockDirOf(dir), staleMs: DEFAULT_LOCK_STALE_MS };
    if ((await judgeLiveness(dir)).verdict === "live") return { ok: false, error: await busyError(lockState, `take the run's lock (store.lock) to ${what}`) };
    const r = await acquirePlanLock({ runDir: dir, owner: { tool: "phasekit store" }, retries: 0 });
    if (!r.ok) return r;
    const lease = claim(slug, dir, r.lock);
    try {
      return await fn(await lease.log);
    } finally {
      await release(lease);
      await r.lock.release();
    }
  };

  const writeMetadataVia = async (own: Lease | undefined, slug: string, next: WorkflowMetadataInput, expectedGeneration: number | null): ReturnType<PlanStore["writeMetadata"]> => {
    return settle(async () => {
      const mismatch = slugMismatch(slug, next);
      if (mismatch !== undefined) return { ok: false, error: mismatch };
      const dir = await openRun(slug);
      const file = path.join(dir, METADATA_FILE);
      return throughLease(own, slug, dir, "write its metadata", (log) => writeMetadataWithLog(log, file, fs, next, expectedGeneration));
    });
  };

  const appendJournalVia = async (own: Lease | undefined, slug: string, entry: JournalAppend): ReturnType<PlanStore["appendJournal"]> => {
    return settle(async () => {
      const checked = checkJournalAppend(slug, entry);
      if (!checked.ok) return checked;
      const dir = await openRun(slug);
      const legacy = await legacyOf(dir);
      return throughLease(own, slug, dir, "append to its journal", async (log) => {
        await log.event(JOURNAL_EVENT, journalEventData(checked.entry));
        return { ok: true as const, entry: { ...checked.entry, seq: lastJournalSeq(legacy, log) } };
      });
    });
  };

  const checkpointsVia = async (own: Lease | undefined, slug: string, opts: { now: () => Date }): Promise<CheckpointStore> => {
    const dir = await dirOf(slug);
    const held = own ?? logs.get(dir);
    // Without the lock, the history is only read: claiming would take a new epoch and fence the live holder.
    if (held === undefined) return readOnlyCheckpoints(dir, slug);
    held.clock.now = () => opts.now().getTime();
    return checkpointsOverRunLog(await held.log, opts.now);
  };

  const store: PlanStore = {
    ...createFsControl(
      fs,
      dirOf,
      async (slug) => settle(async () => readMetaOf(await dirOf(slug))),
      (slug) => (validateSlug(slug).ok ? path.join(planRoot, slug) : null),
    ),
    planRoot,
    runDir: dirOf,
    // The run log's own check (the fingerprint of the stored output), the one `phasekit show` applies.
    readStepOutput: async (slug, record) => checkStoredOutput(await dirOf(slug), record),
    async readMetadata(slug) {
      return settle(async () => readMetaOf(await dirOf(slug)));
    },
    writeMetadata: (slug, next, expectedGeneration) => writeMetadataVia(undefined, slug, next, expectedGeneration),
    async readJournal(slug, options) {
      return settle(async () => {
        const after = journalAfter(options);
        const dir = await dirOf(slug);
        const legacy = await readLegacyJournal(dir, fs);
        if (!legacy.ok) return legacy;
        const held = logs.get(dir);
        if (held !== undefined) return { ok: true, entries: renderJournal(legacy.legacy, await held.log, after), torn: false, tornBytes: 0 };
        const view = await readRunLog(dir);
        try {
          return { ok: true, entries: renderJournal(legacy.legacy, view, after), torn: false, tornBytes: 0 };
        } finally {
          view?.close();
        }
      });
    },
    appendJournal: (slug, entry) => appendJournalVia(undefined, slug, entry),
    async lock(slug, opts) {
      return settle(async () => {
        const runDir = await openRun(slug);
        const r = await acquirePlanLock({ runDir, ...opts });
        if (!r.ok) return r;
        // Taking the lock claims the run log's next epoch at once: whatever an earlier holder writes from
        // now on is refused by its fence instead of becoming acknowledged state.
        const lease = claim(slug, runDir, r.lock);
        try {
          // Every claim repairs the view: a displaced holder's late workflow.json never outlives it. Best
          // effort: readers take the history's generation anyway, and the next write refreshes the file.
          await renderMetadataView(await lease.log, path.join(runDir, METADATA_FILE), fs).catch(() => false);
        } catch (error) {
          await r.lock.release();
          throw error;
        }
        return { ok: true, lock: leaseLock(r.lock, lease) };
      });
    },
    list: () => listPlanRuns(fs, planRoot, readMetaOf),
    checkpoints: (slug, opts) => checkpointsVia(undefined, slug, opts),
    gc: (opts) => gc({ ...opts, planRoot, fs }),
    async close() {
      legacyJournals.clear();
      opened.clear();
      // Its leases are given up (the rule every store applies, closedLeaseError): their writes and checks are refused,
      // and their locks are no longer refreshed, so another process takes the run once they go stale.
      for (const lease of [...logs.values()]) {
        lease.ended ??= await lease.log.then((l) => closedLeaseError("store", lease.slug, l.epoch)).catch(() => undefined);
        // The run log settles (its close-time fold) while the lock is still refreshed, so no contender takes the
        // run mid-fold; then the lock is left to go stale.
        await release(lease);
        await abandonPlanLock(lease.lock);
      }
    },
  };

  /** The lock of one lease: its run log closes before the lock goes, and `store` writes through this lease only. */
  const leaseLock = (lock: PlanLock, lease: Lease): StoreLock => {
    const own = <R>(slug: string, mine: () => R, other: () => R): R => (slug === lease.slug ? mine() : other());
    const bound: PlanStore = {
      ...store,
      writeMetadata: (slug, next, expected) => own(slug, () => writeMetadataVia(lease, slug, next, expected), () => store.writeMetadata(slug, next, expected)),
      appendJournal: (slug, entry) => own(slug, () => appendJournalVia(lease, slug, entry), () => store.appendJournal(slug, entry)),
      checkpoints: (slug, opts) => own(slug, () => checkpointsVia(lease, slug, opts), () => store.checkpoints(slug, opts)),
    };
    return {
      signal: lock.signal,
      assertHeld: async () => {
        if (lease.ended !== undefined) throw lease.ended;
        return lock.assertHeld();
      },
      store: bound,
      async release() {
        lease.ended ??= await lease.log.then((l) => releasedLeaseError("store", lease.slug, l.epoch)).catch(() => undefined);
        await release(lease);
        return lock.release();
      },
    };
  };
  return store;
}

/** One lock acquisition's run log and the clock its records are stamped with. */
interface Lease {
  slug: string;
  dir: string;
  log: Promise<RunLog>;
  clock: { now: () => number };
  lock: PlanLock;
  /** Set when the store's close() gave the lease up or its lock was released: what its later writes and checks are refused with. */
  ended?: WorkflowError | undefined;
}
