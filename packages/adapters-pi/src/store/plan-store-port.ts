/**
 * The storage port of phasekit runs (`PlanStore`): what runWorkflow, the pi wiring and the CLI need from a
 * backend. The fs store (plan-store.ts) and @phasekit/store-postgres implement it and pass the same contract
 * suite (test/contract/plan-store-contract.ts), so callers never change.
 */
import type { Result, WorkflowError } from "@phasekit/core";
import type { JournalAppend, JournalEntry, JournalReadOptions, JournalReadResult } from "./journal.js";
import type { ReleasePlanLockOutcome } from "../lock/plan-lock.js";
import type { CheckpointStore } from "../engine/checkpoint-port.js";
import type { GcOptions } from "./retention.js";
import type { GcReport } from "../engine/retention-policy.js";
import type { LockOwner } from "../lock/holder.js";
import type { ReadMetadataResult } from "./metadata.js";
import type { WorkflowMetadata, WorkflowMetadataInput } from "./metadata-schema.js";
import type { StoreControl } from "./control-fs.js";
import type { StepRecord } from "../engine/records.js";
import type { StoredOutputCheck } from "./run-steps.js";

/** File name of a run's metadata inside its folder. */
export const METADATA_FILE = "workflow.json";

/** What a store's lock gives its holder (a structural subset of the fs `PlanLock`). */
export interface StoreLock {
  /** Aborted (reason: a LOCK_LOST WorkflowError) when the lock is lost. */
  readonly signal: AbortSignal;
  assertHeld(): Promise<void>;
  /** Lets the run go; every later write or `assertHeld` under this lease is LOCK_LOST (`details.ended: "released"`). */
  release(): Promise<ReleasePlanLockOutcome>;
  /**
   * The store as this lock's holder: each of its writes to the locked run is fenced by this very lease (its
   * epoch), whatever other locks the same store object takes later. Fencing belongs to a lease, never to a
   * store object: a holder writes through this, not through the store it locked with (runWorkflow does). The fs
   * store binds it to the run log this lock claimed; PostgreSQL to the lease's epoch and token.
   */
  readonly store?: PlanStore;
}

/** Options of `PlanStore.lock`. */
export interface StoreLockOptions {
  owner: LockOwner;
  staleMs?: number | undefined;
  retries?: number | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * Who holds a run's lease, as a reader sees it (`PlanStore.readLease`): the owner the holder named, and whether
 * the lease is live now by the store's own rule (PostgreSQL: `lease_until` against the database's clock).
 */
export interface StoreLeaseView {
  owner: LockOwner;
  live: boolean;
  /** When the lease runs out unless renewed (ISO 8601, the store's clock). */
  until: string;
}

/**
 * What a list shows of one run, read by a store in one statement (`PlanStore.listRunFacts`): its `list()` entry,
 * its lease as `readLease` gives it, and the step facts (`stepFacts` of run-steps.ts: the latest started step
 * not finished, the one completed last) computed where the records are, so none of them is sent.
 */
export type StoreRunFacts = PlanRunEntry & { lease: StoreLeaseView | null; steps: { current: string | null; last: string | null } };

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
   * journal that cannot take the snapshot does not undo the committed write: it comes back as `journalError`
   * (and a derived copy that could not be refreshed, such as the fs store's workflow.json, as `snapshotError`).
   */
  writeMetadata(
    slug: string,
    next: WorkflowMetadataInput,
    expectedGeneration: number | null,
  ): Promise<Result<{ metadata: WorkflowMetadata; journalError?: WorkflowError; snapshotError?: WorkflowError }>>;
  /** The run's journal (torn tail ignored), in seq order; with `after`, only its entries past that seq (a follower's page). */
  readJournal(slug: string, options?: JournalReadOptions): Promise<JournalReadResult>;
  /** Appends a non-snapshot event (a step reused, a control request honoured) to the run's journal. */
  appendJournal(slug: string, entry: JournalAppend): Promise<Result<{ entry: JournalEntry }>>;
  /** Takes the run's lock, or LOCKED naming the holder. */
  lock(slug: string, options: StoreLockOptions): Promise<Result<{ lock: StoreLock }>>;
  /** Every run folder, sorted by slug. */
  list(): Promise<PlanRunEntry[]>;
  /**
   * A store shared by machines reserves a new run id itself (a unique row, drawn again on conflict), so two
   * machines never start the same "new" run; `runWorkflow` without a target asks it first. The fs store has no
   * such method: its ids are reserved by creating the run folder.
   */
  reserveRun?(): Promise<Result<{ slug: string }>>;
  /**
   * For readers of a store whose lock is not a lock folder on this disk (the CLI and the inspector on a
   * PostgreSQL store): who holds the run's lease now, or null when nobody does. The fs store has no such method:
   * its readers apply the lock folder's liveness rule (lock/liveness.ts).
   */
  readLease?(slug: string): Promise<StoreLeaseView | null>;
  /** For the same readers: the stored output `record` (a completed step of run `slug`) names, checked by fingerprint. */
  readStepOutput?(slug: string, record: StepRecord): Promise<StoredOutputCheck>;
  /**
   * For the same readers (`phasekit list`): every run of `list()` with its lease and step facts, in one read
   * instead of two per run and every step record. Readers without it (the fs store) build the same from the
   * other methods.
   */
  listRunFacts?(): Promise<StoreRunFacts[]>;
  /**
   * For the same readers (the inspector's tree of forks): the runs forked from `slug` (their `forked` journal
   * event names it) with the step each was forked at, sorted by id, without reading every run's journal.
   * Readers without it (the fs store) read each run's history index.
   */
  listForks?(slug: string): Promise<Array<{ slug: string; at: string }>>;
  /**
   * For a reader watching one run (the inspector's change stream): a value that changes whenever anything a
   * reader shows of the run may have changed (metadata, journal, steps, control requests, the holder coming,
   * going or going stale), but not on a lease renewal; cheap enough to ask every 250 ms of a 10,000-step run.
   */
  runSignature?(slug: string): Promise<string>;
  /**
   * The run's checkpoints (completed-step reuse, commit intents). Through a store that holds the run's lock they
   * write to its fenced history (claimed when the lock was taken); without the lock they are a read-only view
   * that claims nothing, and every write through it is LOCK_NOT_OWNED. Asked again under the same lease, they are
   * the same history: each caller sees the others' steps (a holder that asks at every turn reruns nothing).
   */
  checkpoints(slug: string, options: { now: () => Date }): Promise<CheckpointStore>;
  /** Removes finished runs past `keep` / `olderThan`; never a running, paused, locked or unreadable one. */
  gc(options: StoreGcOptions): Promise<GcReport>;
  /**
   * Releases open files (journals) and gives up the leases taken through it, on every store alike: they are not
   * released but no longer renewed (the fs lock's heartbeat stops, the PostgreSQL and memory leases are not
   * renewed), so another process takes the run once they run out (the lock's `staleMs`), and every later write or
   * `assertHeld` under them is LOCK_LOST (`details.ended: "closed"`). The store may be reused afterwards (new
   * locks, reads).
   */
  close(): Promise<void>;
}

/** Options of `PlanStore.gc`: the retention limits (at least one) and the clock. */
export type StoreGcOptions = Pick<GcOptions, "keep" | "olderThan" | "now" | "dryRun">;
