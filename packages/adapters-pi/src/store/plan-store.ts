/**
 * The plan folder as one small interface (`PlanStore`) that runWorkflow, the pi wiring and the CLI share, and
 * its file-system implementation. Another backend implements the same interface and passes the same contract
 * suite (test/contract/plan-store-contract.ts), so callers never change.
 */
import path from "node:path";
import { isWorkflowError, workflowError, type Result, type WorkflowError } from "@phasekit/core";
import { cleanTempFiles, syncDir } from "../io/atomic-write.js";
import { assertRealDir } from "../io/safe-open.js";
import { fsErrorCode, nodeFs, type FsPort } from "../io/fs-port.js";
import {
  JOURNAL_FILE,
  METADATA_EVENT,
  openJournal,
  readJournal,
  type JournalAppend,
  type JournalEntry,
  type JournalReadResult,
  type JournalWriter,
} from "./journal.js";
import { acquirePlanLock, type ReleasePlanLockOutcome } from "../lock/plan-lock.js";
import { ARTIFACTS_DIR } from "./artifacts.js";
import { createCheckpointStore, type CheckpointStore } from "./checkpoints.js";
import { gc, type GcOptions, type GcReport } from "./retention.js";
import type { LockOwner } from "../lock/holder.js";
import { ensurePrivateDir, resolveInsideWith, resolvePlanRoot, validateSlug } from "../io/plan-paths.js";
import { readWorkflowMetadata, writeWorkflowMetadata, type ReadMetadataResult } from "./metadata.js";
import type { WorkflowMetadata, WorkflowMetadataInput } from "./metadata-schema.js";
import { createFsControl, type StoreControl } from "./control-fs.js";

/** File name of a run's metadata inside its folder. */
export const METADATA_FILE = "workflow.json";

/** What a store's lock gives its holder (a structural subset of the fs `PlanLock`). */
export interface StoreLock {
  /** Aborted (reason: a LOCK_LOST WorkflowError) when the lock is lost. */
  readonly signal: AbortSignal;
  assertHeld(): Promise<void>;
  release(): Promise<ReleasePlanLockOutcome>;
}

/** Options of `PlanStore.lock`. */
export interface StoreLockOptions {
  owner: LockOwner;
  staleMs?: number;
  retries?: number;
  signal?: AbortSignal;
}

/** One run folder found by `list()`: its metadata (null if none yet), or why it could not be read. */
export type PlanRunEntry = { slug: string; ok: true; metadata: WorkflowMetadata | null } | { slug: string; ok: false; error: WorkflowError };

/**
 * The storage port of phasekit runs: one record (metadata + journal + lock) per slug. Its control methods
 * (StoreControl) carry pause/stop requests: `requestControl` files one from any process (NOT_FOUND, RUN_FINISHED,
 * NOT_RUNNING for a pause of a run nobody runs); `readControl` gives the pending one (a stop before a pause), or
 * only `signal`'s; `clearControl` removes a honoured one if it is still that very request (cleared: false if not).
 */
export interface PlanStore extends StoreControl {
  /** Where runs live (a folder for the fs store, a label for others). */
  readonly planRoot: string;
  /** The folder of a run, validated to lie inside the plan root (created 0700 on first write). */
  runDir(slug: string): Promise<string>;
  /** The run's metadata; `null` when the run has none; CORRUPT_FILE / UNSUPPORTED_VERSION when unreadable. */
  readMetadata(slug: string): Promise<ReadMetadataResult>;
  /**
   * Compare-and-set write (`null` = create) that also journals the snapshot; returns the stored metadata. A
   * journal that cannot take the snapshot does not undo the committed write: it comes back as `journalError`.
   */
  writeMetadata(
    slug: string,
    next: WorkflowMetadataInput,
    expectedGeneration: number | null,
  ): Promise<Result<{ metadata: WorkflowMetadata; journalError?: WorkflowError }>>;
  /** The run's journal (torn tail ignored). */
  readJournal(slug: string): Promise<JournalReadResult>;
  /** Appends a non-snapshot event (a step reused, a control request honoured) to the run's journal. */
  appendJournal(slug: string, entry: JournalAppend): Promise<Result<{ entry: JournalEntry }>>;
  /** Takes the run's lock, or LOCKED naming the holder. */
  lock(slug: string, options: StoreLockOptions): Promise<Result<{ lock: StoreLock }>>;
  /** Every run folder, sorted by slug. */
  list(): Promise<PlanRunEntry[]>;
  /** The run's checkpoints (completed-step reuse, commit intents); call it while holding the run's lock. */
  checkpoints(slug: string, options: { now: () => Date }): Promise<CheckpointStore>;
  /** Removes finished runs past `keep` / `olderThan`; never a running, paused, locked or unreadable one. */
  gc(options: StoreGcOptions): Promise<GcReport>;
  /** Releases open files (journals); the store may be reused afterwards. */
  close(): Promise<void>;
}

/** Options of `PlanStore.gc`: the retention limits (at least one) and the clock. */
export type StoreGcOptions = Pick<GcOptions, "keep" | "olderThan" | "now" | "dryRun">;

/** Options of `createFsPlanStore`. */
export interface FsPlanStoreOptions {
  repoRoot: string;
  /** See `resolvePlanRoot` (default `<repoRoot>/ai_plan`). */
  planRoot?: string;
  homeDir?: string;
  fs?: FsPort;
}

/** The plan folder on disk: `<planRoot>/<slug>/{workflow.json,journal.ndjson,.lock}`. Options are checked at once. */
export function createFsPlanStore(options: FsPlanStoreOptions): PlanStore {
  const planRoot = resolvePlanRoot(options);
  const fs = options.fs ?? nodeFs;
  const journals = new Map<string, Promise<JournalWriter>>();
  const opened = new Set<string>();

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
      await cleanTempFiles(path.join(dir, ARTIFACTS_DIR), { fs });
      opened.add(dir);
    }
    return dir;
  };
  const journalOf = (dir: string): Promise<JournalWriter> => {
    let w = journals.get(dir);
    if (w === undefined) {
      w = openJournal(path.join(dir, JOURNAL_FILE), { fs });
      journals.set(dir, w);
      w.catch(() => journals.delete(dir));
    }
    return w;
  };

  return {
    planRoot,
    runDir: dirOf,
    async readMetadata(slug) {
      return settle(async () => readWorkflowMetadata(path.join(await dirOf(slug), METADATA_FILE), { fs }));
    },
    async writeMetadata(slug, next, expectedGeneration) {
      return settle(async () => {
        if (next.slug !== slug) return { ok: false, error: slugMismatch(slug, next.slug) };
        const dir = await openRun(slug);
        const file = path.join(dir, METADATA_FILE);
        const w = await writeWorkflowMetadata(file, next, { expectedGeneration, fs });
        if (!w.ok) return w;
        try {
          const journal = await journalOf(dir);
          await journal.append({ generation: w.metadata.generation, at: w.metadata.updatedAt, event: METADATA_EVENT, data: w.metadata });
        } catch (error) {
          // workflow.json is committed: report the journal's own error (CORRUPT_FILE, WRITE_FAILED…) beside it.
          const journalError = isWorkflowError(error)
            ? error
            : workflowError("store", "WRITE_FAILED", `appending to ${path.join(dir, JOURNAL_FILE)} failed: ${String(error)}`, { file: path.join(dir, JOURNAL_FILE) }, error);
          return { ok: true, metadata: w.metadata, journalError };
        }
        return w;
      });
    },
    async readJournal(slug) {
      return settle(async () => readJournal(path.join(await dirOf(slug), JOURNAL_FILE), { fs }));
    },
    async appendJournal(slug, entry) {
      return settle(async () => {
        if (entry.event === METADATA_EVENT) return { ok: false, error: reservedEvent(slug) };
        const journal = await journalOf(await openRun(slug));
        return { ok: true, entry: await journal.append(entry) };
      });
    },
    async lock(slug, opts) {
      return settle(async () => {
        const runDir = await openRun(slug);
        const r = await acquirePlanLock({ runDir, ...opts });
        return r.ok ? { ok: true, lock: r.lock } : r;
      });
    },
    async list() {
      let names: string[];
      try {
        names = await fs.readdir(planRoot);
      } catch (error) {
        if (fsErrorCode(error) === "ENOENT") return [];
        throw workflowError("store", "READ_FAILED", `cannot list ${planRoot}: ${String(error)}`, { file: planRoot }, error);
      }
      const out: PlanRunEntry[] = [];
      for (const slug of names.sort()) {
        if (!validateSlug(slug).ok) continue;
        const st = await fs.lstat(path.join(planRoot, slug)).catch(() => undefined);
        if (st === undefined || !st.isDirectory()) continue;
        const r = await readWorkflowMetadata(path.join(planRoot, slug, METADATA_FILE), { fs });
        out.push(r.ok ? { slug, ok: true, metadata: r.metadata } : { slug, ok: false, error: r.error });
      }
      return out;
    },
    async checkpoints(slug, opts) {
      const runDir = await openRun(slug);
      return createCheckpointStore({ runDir, now: opts.now, fs });
    },
    gc: (opts) => gc({ ...opts, planRoot, fs }),
    ...createFsControl(fs, dirOf, METADATA_FILE),
    async close() {
      const all = [...journals.values()];
      journals.clear();
      opened.clear();
      for (const w of all) await w.then((j) => j.close()).catch(() => undefined);
    },
  };
}

async function settle<T extends { ok: boolean }>(fn: () => Promise<T | { ok: false; error: WorkflowError }>): Promise<T | { ok: false; error: WorkflowError }> {
  try {
    return await fn();
  } catch (error) {
    if (isWorkflowError(error)) return { ok: false, error };
    throw error;
  }
}

function slugMismatch(slug: string, found: string): WorkflowError {
  return workflowError("store", "INVALID_STATE", `metadata for run ${slug} names slug ${JSON.stringify(found)}.`, {
    field: "slug",
    value: found,
    hint: `pass metadata whose slug is ${JSON.stringify(slug)}`,
  });
}

function reservedEvent(slug: string): WorkflowError {
  return workflowError("store", "INVALID_OPTIONS", `run ${slug}: the journal event "${METADATA_EVENT}" is written only by writeMetadata.`, {
    field: "event",
    value: METADATA_EVENT,
    hint: "name the event after what happened, e.g. step-reused",
  });
}
