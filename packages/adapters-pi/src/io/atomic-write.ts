/**
 * Durable replace-by-rename on node:fs. write-file-atomic is not used: it renames a truncated temp file into place
 * after a short write (see docs/decisions.md); here every byte is counted and any failure keeps the old version.
 */
import path from "node:path";
import { randomBytes } from "node:crypto";
import { workflowError } from "@phasekit/core";
import { judgeTaggedPid, pidSpaceTag } from "./process-space.js";
import { fsErrorCode, nodeFs, writeFailureHint, type FsFileHandle, type FsPort } from "./fs-port.js";
import { FILE_MODE } from "./plan-paths.js";
import { assertRealDir, SAFE_DIR_FLAGS, SAFE_OPEN_FLAGS } from "./safe-open.js";

/** The step of an atomic write that failed, as reported in `details.step`. */
export type AtomicWriteStep = "open" | "write" | "sync" | "close" | "rename" | "sync-dir";

/** Options of `writeFileAtomic`. */
export interface AtomicWriteOptions {
  fs?: FsPort;
  /** Mode of the new file; 0600 by default. */
  mode?: number;
  /**
   * Last check before the rename (e.g. a compare-and-set that ran in parallel with the write): if it throws,
   * the temp file is removed, the target is untouched, and its error is rethrown unchanged.
   */
  beforeRename?: () => Promise<void>;
}

// `.workflow.json.1234-0a1b2c3d.a1b2c3d4e5f6.tmp`: dot-prefixed so listings skip it; the writer's pid and pid-space
// tag so cleanup judges it by the lock's rule (a plan root may be shared between machines). Names from before the
// tag (no `-tag`) still count as temp files, but no cleanup can tell whose they are: only `force` removes them.
const TEMP_NAME = /^\.(.+)\.(\d+)(?:-([0-9a-f]{8}))?\.([0-9a-f]{12})\.tmp$/;

/** The name of a fresh temp file beside `target`. */
export function tempPathFor(target: string): string {
  const dir = path.dirname(target);
  return path.join(dir, `.${path.basename(target)}.${process.pid}-${pidSpaceTag()}.${randomBytes(6).toString("hex")}.tmp`);
}

/** True for a name produced by `tempPathFor` (a leftover of an interrupted write). */
export function isTempFileName(name: string): boolean {
  return TEMP_NAME.test(name);
}

/**
 * Replaces `target` with `data` so that a reader (or a crash) sees the old bytes or the new bytes, never a mix:
 * exclusive 0600 temp file → complete write → fsync → close → rename → fsync of the folder. Throws WRITE_FAILED
 * naming the file and the step; before `rename` the old version is untouched and the temp file is removed.
 * A failure of the final folder fsync reports `details.committed: true` (the new bytes are in place, durability unknown).
 */
export async function writeFileAtomic(target: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  const fs = options.fs ?? nodeFs;
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  const temp = tempPathFor(target);
  let step: AtomicWriteStep = "open";
  let handle: FsFileHandle | undefined;
  try {
    handle = await fs.open(temp, SAFE_OPEN_FLAGS.create, options.mode ?? FILE_MODE);
    step = "write";
    await writeAll(handle, bytes);
    step = "sync";
    await handle.sync();
    step = "close";
    const h = handle;
    handle = undefined;
    await h.close();
    if (options.beforeRename !== undefined) {
      try {
        await options.beforeRename();
      } catch (error) {
        await fs.unlink(temp).catch(() => undefined);
        throw Object.assign(Object.create(null) as object, { vetoed: error });
      }
    }
    step = "rename";
    await fs.rename(temp, target);
  } catch (error) {
    if (isVeto(error)) throw error.vetoed;
    if (handle !== undefined) await handle.close().catch(() => undefined);
    if (step !== "open") await fs.unlink(temp).catch(() => undefined);
    throw failure(target, step, error, false);
  }
  try {
    await syncDir(fs, path.dirname(target));
  } catch (error) {
    throw failure(target, "sync-dir", error, true);
  }
}

function isVeto(error: unknown): error is { vetoed: unknown } {
  return typeof error === "object" && error !== null && Object.getPrototypeOf(error) === null && "vetoed" in error;
}

/** Writes every byte of `bytes` at the current position; a write that makes no progress is an error (ENOSPC). */
export async function writeAll(handle: FsFileHandle, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset, null);
    if (!(bytesWritten > 0)) {
      throw Object.assign(new Error(`short write: ${offset} of ${bytes.length} bytes written, then no progress`), { code: "ESHORTWRITE" });
    }
    offset += bytesWritten;
  }
}

/** fsyncs a folder so that a rename or a new file in it survives a power cut (a symlinked folder is refused). */
export async function syncDir(fs: FsPort, dir: string): Promise<void> {
  const handle = await fs.open(dir, SAFE_DIR_FLAGS);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Options of `cleanTempFiles`. */
export interface CleanTempOptions {
  fs?: FsPort;
  /** Also remove temp files of writers that may still be running (default false: only a provably dead writer's go). */
  force?: boolean;
}

/** Removes leftover temp files of interrupted writes in `dir` (not recursive); returns the names removed. */
export async function cleanTempFiles(dir: string, options: CleanTempOptions = {}): Promise<string[]> {
  const fs = options.fs ?? nodeFs;
  // A symlinked folder would make us delete temp-looking files wherever it points.
  if (!(await assertRealDir(fs, dir, "atomic-write"))) return [];
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch (error) {
    if (fsErrorCode(error) === "ENOENT") return [];
    throw workflowError("atomic-write", "READ_FAILED", `cannot list ${dir} to clean temp files: ${String(error)}`, { file: dir }, error);
  }
  const removed: string[] = [];
  for (const name of names) {
    const m = TEMP_NAME.exec(name);
    if (m === null) continue;
    if (!options.force && judgeTaggedPid(Number(m[2]), m[3] ?? "") !== "dead") continue;
    try {
      await fs.unlink(path.join(dir, name));
      removed.push(name);
    } catch (error) {
      if (fsErrorCode(error) !== "ENOENT") {
        throw workflowError("atomic-write", "WRITE_FAILED", `cannot remove temp file ${path.join(dir, name)}: ${String(error)}`, { file: path.join(dir, name) }, error);
      }
    }
  }
  return removed;
}

function failure(target: string, step: AtomicWriteStep, error: unknown, committed: boolean) {
  const code = fsErrorCode(error);
  const reason = error instanceof Error ? error.message : String(error);
  const state = committed ? "the new version is in place but may not survive a power cut" : "the previous version is intact";
  return workflowError("atomic-write", "WRITE_FAILED", `writing ${target} failed at step '${step}' (${reason}); ${state}.`, {
    file: target,
    step,
    errno: code,
    committed,
    hint: writeFailureHint(code),
  }, error);
}
