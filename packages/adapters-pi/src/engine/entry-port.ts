/**
 * The entry port: the narrowest seam a history backend can implement. A run's history is a list of entries, each
 * written under an epoch; a backend claims epochs, appends entries fenced by one, reads them from a position, keeps
 * outputs as content-addressed blobs, and replaces the list with what compaction keeps. Everything else (the index
 * of latest records, the reuse decision, rerun marks, what compaction keeps) is the engine's (entry-history.ts).
 * The memory store implements only this; the fs run log and PostgreSQL implement the wider history port
 * (history-port.ts) for their layouts' sake (docs/decisions.md D19).
 */
import type { CommitRecord } from "./records.js";

/** One entry of a run's history. Times are ISO strings; `input`/`output` are fingerprints, `blob` an output's address. */
export type HistoryEntry =
  | { t: "start"; key: string; attempt: number; input: string; at: string }
  | { t: "fail"; key: string; attempt: number; input: string; startedAt: string; at: string; error: string }
  | { t: "done"; key: string; attempt: number; input: string; startedAt: string; at: string; output: string }
  | { t: "commit"; record: CommitRecord }
  | { t: "rerun"; from: string; keys: string[]; at: string; reason?: string }
  | { t: "spent"; keys: string[]; at: string };

/** An entry as the history holds it: with the epoch it was written under and its position. */
export interface StoredEntry {
  pos: number;
  epoch: number;
  entry: HistoryEntry;
}

/** A backend's history of one run (see the module comment). */
export interface EntryPort {
  /** Where the history lives, named in errors. */
  readonly file: string;
  /** Claims the next epoch (above every earlier one): from now on every append under an earlier epoch is LOCK_LOST. */
  claim(): Promise<number>;
  /** Appends `entries` in order under `epoch`, all or none; LOCK_LOST when a later epoch was claimed. */
  append(epoch: number, entries: readonly HistoryEntry[]): Promise<void>;
  /** The entries at positions ≥ `from`, in order. */
  read(from: number): Promise<StoredEntry[]>;
  /** Stores `text` under its content address `address` (a fingerprint of it); storing it again changes nothing. */
  putBlob(address: string, text: string): Promise<void>;
  /** The text stored under `address`, or undefined. */
  getBlob(address: string): Promise<string | undefined>;
  /**
   * Under `epoch` (LOCK_LOST when a later one was claimed): the history becomes `keep`, and blobs outside `blobs` go.
   * The engine never calls it while one of its own appends or blob puts is unanswered (entry-history.ts), so a
   * backend need not keep what lands during it.
   */
  compact(epoch: number, keep: readonly StoredEntry[], blobs: ReadonlySet<string>): Promise<{ removedBlobs: number }>;
}
