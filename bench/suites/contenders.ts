/**
 * The contenders of the run-log goals, built the same way for the timed suite and the smoke test: the run log,
 * the raw floor (append to an open fd + fdatasync) and LangGraph's SqliteSaver with synchronous=FULL.
 */
import { mkdtempSync, openSync, writeSync, fdatasyncSync, closeSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import type { Checkpoint, CheckpointMetadata } from "@langchain/langgraph-checkpoint";
import type { RunnableConfig } from "@langchain/core/runnables";

/** A fresh temp folder for one contender. */
export function tempDir(label: string): string {
  return mkdtempSync(path.join(tmpdir(), `phasekit-bench-${label}-`));
}

/** A JSON value whose canonical encoding is about `bytes` long (an object of 100-byte strings). */
export function jsonOfSize(bytes: number, salt = 0): Record<string, string> {
  const out: Record<string, string> = {};
  const n = Math.max(1, Math.round(bytes / 110));
  for (let i = 0; i < n; i++) out[`k${String(i).padStart(4, "0")}`] = `${salt}-${i}-`.padEnd(100, "x");
  return out;
}

/** The raw floor: appends bytes to one open file and fdatasyncs each time. */
export function rawAppender(dir: string): { append(bytes: Buffer): void; close(): void } {
  const fd = openSync(path.join(dir, "raw.log"), "a");
  return {
    append(bytes) {
      writeSync(fd, bytes);
      fdatasyncSync(fd);
    },
    close: () => closeSync(fd),
  };
}

/** A SqliteSaver on a file in `dir`, set up, with synchronous=FULL (one fsync per commit, as the goal says). */
export function sqliteSaver(dir: string): SqliteSaver {
  const saver = SqliteSaver.fromConnString(path.join(dir, "checkpoints.db"));
  (saver as unknown as { setup(): void }).setup();
  saver.db.pragma("synchronous = FULL");
  return saver;
}

/**
 * A SqliteSaver whose write-ahead log is in its steady state: `puts` checkpoints of `value` put first (thread
 * "warm-up"). SQLite's WAL grows to its checkpoint size (about 4 MB here) and is then rewritten from its start:
 * commits on a grown WAL overwrite blocks the file already has, and their fsync writes no file-size change, so
 * they cost about two thirds of those while it grows (measured: 327 µs per 10 KB put over the first 200, 200–245
 * µs from the 400th on). A put timed on a fresh file measures only that first phase.
 */
export async function steadySqliteSaver(dir: string, value: unknown, puts: number): Promise<SqliteSaver> {
  const saver = sqliteSaver(dir);
  for (let i = 0; i < puts; i++) {
    const c = checkpointOf("warm-up", i, value);
    await saver.put(c.config, c.checkpoint, c.metadata);
  }
  return saver;
}

/** A checkpoint holding `value` as its one channel, numbered `i`, for thread `thread`. */
export function checkpointOf(thread: string, i: number, value: unknown): { config: RunnableConfig; checkpoint: Checkpoint; metadata: CheckpointMetadata } {
  const id = `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
  return {
    config: { configurable: { thread_id: thread, checkpoint_ns: "" } },
    checkpoint: { v: 4, id, ts: new Date(0).toISOString(), channel_values: { out: value }, channel_versions: { out: i }, versions_seen: {} } as Checkpoint,
    metadata: { source: "loop", step: i, parents: {} } as CheckpointMetadata,
  };
}

/** Total bytes of the files under `dir` (recursively). */
export function folderBytes(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    total += e.isDirectory() ? folderBytes(p) : statSync(p).size;
  }
  return total;
}
