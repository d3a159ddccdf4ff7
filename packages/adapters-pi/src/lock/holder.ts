/**
 * Who holds a plan lock, and how to read it. The lock is a directory `<runDir>/.lock` that always holds exactly
 * one `holder-<token>.json`; the token makes every removal identity-checked (an unlink by a unique name cannot
 * hit another holder's file), which is what keeps stale takeover and owner-only release safe.
 */
import path from "node:path";
import { promises as fsp } from "node:fs";
import { z } from "zod";
import { workflowError } from "@phasekit/core";
import { fsErrorCode, nodeFs } from "../io/fs-port.js";
import { MAX_FILE_BYTES, readRegular } from "../io/safe-open.js";

/** Name of the lock directory inside a run folder. */
export const LOCK_DIR_NAME = ".lock";
/** Default stale time (ms): a lock whose directory was not refreshed for this long may be taken over. */
export const DEFAULT_LOCK_STALE_MS = 10_000;

const HOLDER_FILE = /^holder-([0-9a-f]{32})\.json$/;

/** Who asks for the lock: the tool name is required, pid and host default to this process. */
export interface LockOwner {
  tool: string;
  pid?: number | undefined;
  host?: string | undefined;
}

/** The holder file's content (version 1). */
export const lockHolderSchema = z.strictObject({
  schemaVersion: z.literal(1),
  token: z.string().regex(/^[0-9a-f]{32}$/),
  tool: z.string().min(1),
  pid: z.int().min(0),
  host: z.string(),
  since: z.string().min(1),
  /** The holder's stale time: a taker configured shorter waits this long instead, so mixed settings stay safe. */
  staleMs: z.int().min(0).optional(),
  /** `/proc/sys/kernel/random/boot_id` of the holder's machine: a pid means nothing across a reboot. */
  bootId: z.string().max(200).optional(),
  /** `readlink /proc/self/ns/pid` of the holder: a pid means nothing in another pid namespace (a container). */
  pidNs: z.string().max(200).optional(),
});

/** A lock holder as recorded in its holder file. */
export type LockHolder = z.infer<typeof lockHolderSchema>;

/** What `readLockHolder` finds: a free lock, or a held one with its holder (null if unreadable) and age. */
export type LockInspection =
  | { held: false; lockDir: string }
  | {
      held: true;
      lockDir: string;
      holder: LockHolder | null;
      /** Wall-clock age of the last refresh, for display: liveness is `judgeLiveness`'s (liveness.ts), never this. */
      ageMs: number;
      stale: boolean;
      /** The lock directory's entries and mtime as read: the heartbeat that `judgeLiveness` watches. */
      names: string[];
      mtimeMs: number;
    };

/** The lock directory of a run folder. */
export function lockDirOf(runDir: string): string {
  return path.join(path.resolve(runDir), LOCK_DIR_NAME);
}

/** The holder file name for a token. */
export function holderFileName(token: string): string {
  return `holder-${token}.json`;
}

/** True for a holder file name. */
export function isHolderFileName(name: string): boolean {
  return HOLDER_FILE.test(name);
}

/** One line naming a holder for messages: `tool X (pid 12 on host h) since 2026-…`. */
export function describeHolder(holder: LockHolder | null): string {
  if (holder === null) return "an unknown holder (its holder file is unreadable)";
  return `${describeOwner(holder)} since ${holder.since}`;
}

/** A lock's owner in words, as every store's readers show it (the fs holder file, a PostgreSQL lease's owner). */
export function describeOwner(owner: LockOwner): string {
  return `tool ${owner.tool} (pid ${owner.pid ?? "?"} on host ${owner.host || "?"})`;
}

/** Parses holder-file text; null when it is not a valid holder record. */
export function parseHolder(text: string): LockHolder | null {
  try {
    const r = lockHolderSchema.safeParse(JSON.parse(text));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

/**
 * Reads the lock of `runDir` without touching it (for callers and the CLI). An empty lock directory counts as
 * free: a lock is only ever created with its holder file inside, so emptiness means a release or takeover is
 * half done. `stale` uses the directory's mtime, which the holder refreshes every `staleMs / 2`.
 */
export async function readLockHolder(runDir: string, options: { staleMs?: number; nowMs?: number } = {}): Promise<LockInspection> {
  const lockDir = lockDirOf(runDir);
  const staleMs = options.staleMs ?? DEFAULT_LOCK_STALE_MS;
  for (let attempt = 0; attempt < 3; attempt++) {
    let names: string[];
    let mtimeMs: number;
    try {
      names = await fsp.readdir(lockDir);
      mtimeMs = (await fsp.stat(lockDir)).mtimeMs;
    } catch (error) {
      if (fsErrorCode(error) === "ENOENT") return { held: false, lockDir };
      throw readFailed(lockDir, error);
    }
    if (names.length === 0) return { held: false, lockDir };
    const ageMs = Math.max(0, (options.nowMs ?? Date.now()) - mtimeMs);
    const name = names.find(isHolderFileName);
    if (name === undefined) return { held: true, lockDir, holder: null, ageMs, stale: ageMs > staleMs, names, mtimeMs };
    // A FIFO or symlink planted as the holder file is never opened blocking or followed.
    const bytes = await readRegular(nodeFs, path.join(lockDir, name), { maxBytes: MAX_FILE_BYTES.small, scope: "lock" }).catch(() => undefined);
    if (bytes === undefined) return { held: true, lockDir, holder: null, ageMs, stale: ageMs > staleMs, names, mtimeMs };
    // null: released or taken over between the listing and the read: look again.
    if (bytes !== null) {
      const holder = parseHolder(bytes.toString("utf8"));
      return { held: true, lockDir, holder, ageMs, stale: ageMs > Math.max(staleMs, holder?.staleMs ?? 0), names, mtimeMs };
    }
  }
  return { held: true, lockDir, holder: null, ageMs: 0, stale: false, names: ["?"], mtimeMs: 0 };
}

function readFailed(lockDir: string, error: unknown) {
  return workflowError("lock", "READ_FAILED", `cannot read the lock ${lockDir}: ${String(error)}`, {
    file: lockDir,
    hint: "check the folder's permissions",
  }, error);
}
