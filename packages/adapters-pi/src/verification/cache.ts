/**
 * Remembers which verification keys passed: for one run (memory) or across runs (a JSON file). This is a
 * cache, not user data: a corrupt or unreadable file is reported and read as empty, and the next record
 * replaces it atomically. Losing entries only costs a re-run; it can never turn a failure into a pass, because
 * an entry is only ever looked up by the exact key of the state that passed.
 */
import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { workflowError } from "@phasekit/core";
import { writeFileAtomic } from "../io/atomic-write.js";
import { fsErrorCode } from "../io/fs-port.js";
import { DIR_MODE } from "../io/plan-paths.js";
import { schemaIssue } from "../engine/record-issue.js";
import type { VerificationCacheMode } from "./config.js";

/** One remembered pass. */
export interface VerificationCacheEntry {
  key: string;
  command: string;
  tool: string;
  phase: string | null;
  recordedAt: number;
}

/** What `record` needs; the time is added by the cache. */
export type VerificationCacheRecord = Omit<VerificationCacheEntry, "recordedAt">;

/** A cache of passing verification keys. `off` remembers nothing. */
export interface VerificationCache {
  readonly mode: VerificationCacheMode;
  /** The backing file of a persistent cache (left out of the workspace state it keys). */
  readonly file?: string;
  has(key: string): Promise<boolean>;
  record(entry: VerificationCacheRecord): Promise<void>;
  entries(): Promise<readonly VerificationCacheEntry[]>;
}

/** Where a persistent cache reports a file it had to ignore. */
export interface CacheWarningSink {
  warning(text: string, options?: { id?: string }): unknown;
}

/** Options shared by the cache factories. */
export interface VerificationCacheOptions {
  /** Entries kept; the oldest recorded is dropped first. Default 200. */
  maxEntries?: number;
  now?: () => number;
}

/** Options of `createPersistentVerificationCache`. */
export interface PersistentVerificationCacheOptions extends VerificationCacheOptions {
  file: string;
  reporter?: CacheWarningSink;
}

/** Default bound on entries. */
export const DEFAULT_CACHE_MAX_ENTRIES = 200;

const entrySchema = z.strictObject({
  key: z.string().min(1),
  command: z.string(),
  tool: z.string(),
  phase: z.string().nullable(),
  recordedAt: z.number().int().nonnegative(),
});

/** The persisted cache file: version 1, entries oldest first. */
export const verificationCacheFileSchema = z.strictObject({ schemaVersion: z.literal(1), entries: z.array(entrySchema) });

function checkMax(maxEntries: number | undefined): number {
  const max = maxEntries ?? DEFAULT_CACHE_MAX_ENTRIES;
  if (Number.isInteger(max) && max >= 1) return max;
  throw workflowError("verification-cache", "INVALID_OPTIONS", `maxEntries must be a positive integer, got ${String(max)}.`, {
    field: "maxEntries",
    value: max,
    hint: "pass an integer >= 1",
  });
}

// Re-recording a key moves it to the newest end, so the bound drops what has not passed for longest.
function withEntry(list: readonly VerificationCacheEntry[], entry: VerificationCacheEntry, max: number): VerificationCacheEntry[] {
  const next = [...list.filter((e) => e.key !== entry.key), entry];
  return next.slice(Math.max(0, next.length - max));
}

/** A cache that does nothing: every lookup misses. */
export function createDisabledVerificationCache(): VerificationCache {
  return { mode: "off", has: async () => false, record: async () => undefined, entries: async () => [] };
}

/** A per-run cache in memory, bounded to `maxEntries`. */
export function createRunVerificationCache(options: VerificationCacheOptions = {}): VerificationCache {
  const max = checkMax(options.maxEntries);
  const now = options.now ?? Date.now;
  let list: VerificationCacheEntry[] = [];
  return {
    mode: "run",
    has: async (key) => list.some((e) => e.key === key),
    record: async (entry) => {
      list = withEntry(list, { ...entry, recordedAt: now() }, max);
    },
    entries: async () => [...list],
  };
}

/**
 * A cache kept in a JSON file, read on every lookup so passes recorded by another process count too, and
 * written with an atomic replace. Two processes recording at once may drop one entry (last writer wins):
 * acceptable for a cache, and it never loses a file's consistency.
 */
export function createPersistentVerificationCache(options: PersistentVerificationCacheOptions): VerificationCache {
  if (typeof options.file !== "string" || !path.isAbsolute(options.file)) {
    throw workflowError("verification-cache", "INVALID_OPTIONS", `file must be an absolute path, got ${JSON.stringify(options.file)}.`, {
      field: "file",
      value: options.file,
      hint: "pass the absolute path of the cache file, e.g. <plan folder>/verification-cache.json",
    });
  }
  const { file, reporter } = options;
  const max = checkMax(options.maxEntries);
  const now = options.now ?? Date.now;
  let queue: Promise<unknown> = Promise.resolve();
  let warned = "";

  const warn = (reason: string): void => {
    if (warned === reason) return;
    warned = reason;
    reporter?.warning(`verification cache ${file} ignored (${reason}); it will be rewritten`, { id: `verification-cache:${file}` });
  };

  const load = async (): Promise<VerificationCacheEntry[]> => {
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (error) {
      if (fsErrorCode(error) !== "ENOENT") warn(`unreadable: ${fsErrorCode(error) ?? String(error)}`);
      return [];
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      warn("not JSON");
      return [];
    }
    const parsed = verificationCacheFileSchema.safeParse(json);
    if (!parsed.success) {
      warn(`invalid: ${schemaIssue(parsed.error, json).text}`);
      return [];
    }
    return parsed.data.entries;
  };

  // One write at a time within this process, so concurrent records of one run never drop each other.
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = queue.then(fn, fn);
    queue = run.catch(() => undefined);
    return run;
  };

  return {
    mode: "persistent",
    file,
    has: (key) => serial(async () => (await load()).some((e) => e.key === key)),
    record: (entry) =>
      serial(async () => {
        const next = withEntry(await load(), { ...entry, recordedAt: now() }, max);
        await mkdir(path.dirname(file), { recursive: true, mode: DIR_MODE });
        await writeFileAtomic(file, `${JSON.stringify({ schemaVersion: 1, entries: next }, null, 2)}\n`);
      }),
    entries: () => serial(load),
  };
}

/** The cache a policy's `cache` mode asks for; `persistent` needs `file`. */
export function createVerificationCache(mode: VerificationCacheMode, options: Partial<PersistentVerificationCacheOptions> = {}): VerificationCache {
  if (mode === "off") return createDisabledVerificationCache();
  if (mode === "run") return createRunVerificationCache(options);
  if (options.file === undefined) {
    throw workflowError("verification-cache", "INVALID_OPTIONS", "cache mode persistent needs a file.", {
      field: "file",
      value: undefined,
      hint: "pass the cache file path, or use cache: run",
    });
  }
  return createPersistentVerificationCache({ ...options, file: options.file });
}
