/**
 * Hostile-file-safe opens for everything inside a run folder. A planted symlink could point a write anywhere, a
 * FIFO blocks `open`/`read` forever, and a huge file makes `toString` throw an untyped ERR_STRING_TOO_LONG. So
 * every open here uses O_NOFOLLOW | O_NONBLOCK (a FIFO opens at once instead of waiting for a peer), accepts only
 * a regular file (checked with fstat on the descriptor, not on the name), and every read is capped.
 */
import { constants } from "node:fs";
import { workflowError, type WorkflowError } from "@phasekit/core";
import { fsErrorCode, type FsFileHandle, type FsPort } from "./fs-port.js";
import { FILE_MODE } from "./plan-paths.js";

const { O_RDONLY, O_RDWR, O_WRONLY, O_APPEND, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = constants;

/**
 * How a file is opened: read it, append to it (created 0600), rewrite it in place (must exist), create it
 * (fails with EEXIST when it exists), or create it for writing at chosen offsets and reading back (a run-log
 * segment: no O_APPEND, which would send every positioned write to the end, past the segment's zero-filled room).
 */
export type SafeOpenMode = "read" | "append" | "update" | "create" | "create-segment";

/** The open(2) flags of each mode, always with O_NOFOLLOW | O_NONBLOCK. */
export const SAFE_OPEN_FLAGS: Readonly<Record<SafeOpenMode, number>> = {
  read: O_RDONLY | O_NOFOLLOW | O_NONBLOCK,
  append: O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK,
  update: O_RDWR | O_NOFOLLOW | O_NONBLOCK,
  create: O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK,
  "create-segment": O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK,
};

/** Flags that open a folder only if it is a real folder (not a symlink to one). */
export const SAFE_DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK;

/** Size caps of the files of a run folder (bytes); a bigger file is FILE_TOO_LARGE, never read whole. */
export const MAX_FILE_BYTES = {
  /** workflow.json */
  metadata: 16 * 1024 * 1024,
  /**
   * checkpoints.ndjson, journal.ndjson, a run-log segment (its writer stops short of it), and any one section
   * of a run-log snapshot that is read into memory at once
   */
  log: 256 * 1024 * 1024,
  /** one artifact */
  artifact: 128 * 1024 * 1024,
  /** pause/stop request files, lock holder files */
  small: 64 * 1024,
} as const;

/** An open regular file and its size at open time. */
export interface SafeHandle {
  handle: FsFileHandle;
  size: number;
}

/**
 * Opens `file` safely. Returns null when it does not exist (modes read and update); throws UNSAFE_FILE for a
 * symlink, FIFO, socket, device or folder in its place (closing what was opened, touching nothing), and
 * READ_FAILED / WRITE_FAILED for other errors. Every message names the file.
 */
export async function openRegular(fs: FsPort, file: string, mode: SafeOpenMode, scope = "fs"): Promise<SafeHandle | null> {
  let handle: FsFileHandle;
  try {
    handle = await fs.open(file, SAFE_OPEN_FLAGS[mode], FILE_MODE);
  } catch (error) {
    const code = fsErrorCode(error);
    if (code === "ENOENT" && (mode === "read" || mode === "update")) return null;
    throw openError(scope, file, mode, error);
  }
  try {
    const st = await handle.stat().catch((error: unknown) => {
      throw workflowError(scope, "READ_FAILED", `cannot inspect ${file}: ${String(error)}`, { file, errno: fsErrorCode(error) }, error);
    });
    if (!st.isFile()) throw unsafeFile(scope, file, kindOf(st));
    return { handle, size: st.size };
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
}

/**
 * Reads a regular file whole, at most `maxBytes`: null when missing, FILE_TOO_LARGE above the cap (checked
 * before reading and again after, in case it grew), UNSAFE_FILE for anything that is not a regular file.
 */
export async function readRegular(fs: FsPort, file: string, options: { maxBytes: number; scope?: string }): Promise<Buffer | null> {
  const scope = options.scope ?? "fs";
  const opened = await openRegular(fs, file, "read", scope);
  if (opened === null) return null;
  const { handle, size } = opened;
  try {
    if (size > options.maxBytes) throw tooLarge(scope, file, size, options.maxBytes);
    let bytes: Buffer;
    try {
      bytes = await handle.readFile();
    } catch (error) {
      throw workflowError(scope, "READ_FAILED", `cannot read ${file}: ${String(error)}`, { file, errno: fsErrorCode(error) }, error);
    }
    if (bytes.length > options.maxBytes) throw tooLarge(scope, file, bytes.length, options.maxBytes);
    return bytes;
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * Throws UNSAFE_FILE unless `dir` is a real folder (lstat: a symlink to a folder is refused); returns false when
 * it does not exist. Check a run folder and `artifacts/` before listing, writing into or deleting from them.
 */
export async function assertRealDir(fs: FsPort, dir: string, scope = "fs"): Promise<boolean> {
  let st;
  try {
    st = await fs.lstat(dir);
  } catch (error) {
    if (fsErrorCode(error) === "ENOENT") return false;
    throw workflowError(scope, "READ_FAILED", `cannot inspect ${dir}: ${String(error)}`, { file: dir, errno: fsErrorCode(error) }, error);
  }
  if (!st.isDirectory()) throw unsafeFile(scope, dir, kindOf(st), "a folder");
  return true;
}

/**
 * fsyncs a folder opened with O_DIRECTORY | O_NOFOLLOW, so a planted symlink is refused (UNSAFE_FILE naming
 * it) rather than synced.
 */
export async function syncRealDir(fs: FsPort, dir: string, scope = "fs"): Promise<void> {
  const handle = await fs.open(dir, SAFE_DIR_FLAGS).catch((error: unknown) => {
    throw dirOpenError(scope, dir, error);
  });
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** What a non-regular file is, for messages. */
export function kindOf(st: { isSymbolicLink(): boolean; isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean; isFile(): boolean }): string {
  if (st.isSymbolicLink()) return "a symlink";
  if (st.isDirectory()) return "a folder";
  if (st.isFIFO()) return "a FIFO";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "a device";
  return st.isFile() ? "a regular file" : "not a regular file";
}

/** UNSAFE_FILE naming the file and what was found in its place. */
export function unsafeFile(scope: string, file: string, found: string, expected = "a regular file"): WorkflowError {
  return workflowError(scope, "UNSAFE_FILE", `${file} is ${found}, not ${expected}; phasekit does not follow or touch it.`, {
    file,
    value: found,
    hint: `move ${file} away by hand (it was left as it is), then retry`,
  });
}

/** FILE_TOO_LARGE naming the file, its size and the cap. */
export function tooLarge(scope: string, file: string, size: number, max: number): WorkflowError {
  return workflowError(scope, "FILE_TOO_LARGE", `${file} is ${size} bytes, above the cap of ${max} bytes; it was not read.`, {
    file,
    value: size,
    max,
    hint: "inspect the file by hand: phasekit never writes one this large",
  });
}

/** True when a create-mode open failed because the name exists (the raw error or its typed WRITE_FAILED). */
export function isAlreadyExists(error: unknown): boolean {
  return fsErrorCode(error) === "EEXIST" || (error as { details?: { errno?: unknown } } | null)?.details?.errno === "EEXIST";
}

/** The typed error of a failed open of `file` (a planted symlink, FIFO or folder is UNSAFE_FILE). */
export function openError(scope: string, file: string, mode: SafeOpenMode, error: unknown): WorkflowError {
  const code = fsErrorCode(error);
  // ELOOP: O_NOFOLLOW met a symlink. ENXIO: a FIFO with no reader opened for writing. EISDIR: a folder.
  if (code === "ELOOP") return unsafeFile(scope, file, "a symlink");
  if (code === "ENXIO") return unsafeFile(scope, file, "a FIFO or socket");
  if (code === "EISDIR") return unsafeFile(scope, file, "a folder");
  const what = mode === "read" ? "READ_FAILED" : "WRITE_FAILED";
  return workflowError(scope, what, `cannot open ${file} (${mode}): ${String(error)}`, { file, errno: code }, error);
}

/** The typed error of a failed O_DIRECTORY | O_NOFOLLOW open of `dir`: what is there instead, when not a folder. */
export function dirOpenError(scope: string, dir: string, error: unknown): WorkflowError {
  const code = fsErrorCode(error);
  if (code === "ELOOP") return unsafeFile(scope, dir, "a symlink", "a folder");
  if (code === "ENOTDIR") return unsafeFile(scope, dir, "not a folder", "a folder");
  return workflowError(scope, "READ_FAILED", `cannot open the folder ${dir}: ${String(error)}`, { file: dir, errno: code }, error);
}
