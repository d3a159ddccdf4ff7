/**
 * The synchronous side of safe-open.ts, for the run log: a reuse hit must cost microseconds, and a thread-pool
 * round trip alone costs more than reading 1 KB from the page cache. Same flags, same caps, same typed errors
 * (they are imported from safe-open.ts, the one home of those rules); only the calls are synchronous.
 *
 * `RealDir` is a folder held open as itself: listing and deleting go through its descriptor (on Linux the
 * `/proc/self/fd/<fd>` path, which names the folder that was opened whatever is renamed over its name later),
 * so a folder swapped for a symlink after it was opened is never listed or deleted from.
 */
import { closeSync, existsSync, fdatasyncSync, fstatSync, fsyncSync, lstatSync, openSync, readdirSync, readSync, renameSync, unlinkSync } from "node:fs";
import path from "node:path";
import { workflowError } from "@phasekit/core";
import { fsErrorCode } from "./fs-port.js";
import { dirOpenError, kindOf, openError, SAFE_DIR_FLAGS, SAFE_OPEN_FLAGS, tooLarge, unsafeFile } from "./safe-open.js";

/** An open regular file: its descriptor (the caller closes it) and its size at open time. */
export interface SyncHandle {
  fd: number;
  size: number;
}

/**
 * Opens `file` for reading as safe-open.ts's `openRegular` does: null when it does not exist, UNSAFE_FILE for
 * anything but a regular file, FILE_TOO_LARGE (naming it) when it is bigger than `maxBytes`, before any read.
 */
export function openRegularSync(file: string, options: { maxBytes: number; scope?: string }): SyncHandle | null {
  const scope = options.scope ?? "fs";
  let fd: number;
  try {
    fd = openSync(file, SAFE_OPEN_FLAGS.read);
  } catch (error) {
    if (fsErrorCode(error) === "ENOENT") return null;
    throw openError(scope, file, "read", error);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw unsafeFile(scope, file, kindOf(st));
    if (st.size > options.maxBytes) throw tooLarge(scope, file, st.size, options.maxBytes);
    return { fd, size: st.size };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** `length` bytes of `fd` from `offset` (fewer only at the end of the file). Callers bound `length` by a cap. */
export function readAt(fd: number, offset: number, length: number): Buffer {
  const buf = Buffer.allocUnsafe(length);
  let got = 0;
  while (got < length) {
    const n = readSync(fd, buf, got, length - got, offset + got);
    if (n === 0) break;
    got += n;
  }
  return got === length ? buf : buf.subarray(0, got);
}

/** fdatasyncs `file` through a safe open (a planted link or FIFO there is UNSAFE_FILE, not synced). */
export function datasyncRegularSync(file: string, scope = "fs"): void {
  const h = openRegularSync(file, { maxBytes: Number.MAX_SAFE_INTEGER, scope });
  if (h === null) throw workflowError(scope, "READ_FAILED", `${file} is gone; it cannot be synced.`, { file, errno: "ENOENT" });
  try {
    fdatasyncSync(h.fd);
  } finally {
    closeSync(h.fd);
  }
}

/** fsyncs the real folder `dir` (O_DIRECTORY | O_NOFOLLOW: a symlink or file there is UNSAFE_FILE naming it). */
export function syncRealDirSync(dir: string, scope = "fs"): void {
  let fd: number;
  try {
    fd = openSync(dir, SAFE_DIR_FLAGS);
  } catch (error) {
    throw dirOpenError(scope, dir, error);
  }
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

const PROC_FD = existsSync("/proc/self/fd") ? "/proc/self/fd" : undefined;

/** A real folder held open by descriptor; see the module comment. Close it when done. */
export class RealDir {
  private constructor(
    readonly path: string,
    private readonly fd: number,
    private readonly scope: string,
  ) {}

  /** Opens `dir` if it is a real folder: null when it does not exist, UNSAFE_FILE naming it otherwise. */
  static open(dir: string, scope = "fs"): RealDir | null {
    let fd: number;
    try {
      fd = openSync(dir, SAFE_DIR_FLAGS);
    } catch (error) {
      if (fsErrorCode(error) === "ENOENT") return null;
      throw dirOpenError(scope, dir, error);
    }
    return new RealDir(dir, fd, scope);
  }

  /** The names in the folder that was opened. */
  list(): string[] {
    return readdirSync(this.through("."));
  }

  /** A path that names `name` (one file name, no `/`) inside the folder that was opened: open, read or create by it. */
  file(name: string): string {
    if (name === "" || name === "." || name === ".." || name.includes("/")) {
      throw unsafeFile(this.scope, path.join(this.path, name), "a name that leaves its folder", "a file name");
    }
    return this.through(name);
  }

  /** Unlinks `name` from the folder that was opened; false when it was already gone. */
  unlink(name: string): boolean {
    const file = this.file(name);
    try {
      unlinkSync(file);
      return true;
    } catch (error) {
      if (fsErrorCode(error) === "ENOENT") return false;
      throw workflowError(this.scope, "WRITE_FAILED", `cannot delete ${path.join(this.path, name)}: ${String(error)}`, { file: path.join(this.path, name), errno: fsErrorCode(error) }, error);
    }
  }

  /** Renames `from` to `to`, both inside the folder that was opened (whatever is there is not followed). */
  rename(from: string, to: string): void {
    const a = this.file(from);
    const b = this.file(to);
    try {
      renameSync(a, b);
    } catch (error) {
      throw workflowError(this.scope, "WRITE_FAILED", `cannot rename ${path.join(this.path, from)}: ${String(error)}`, { file: path.join(this.path, from), errno: fsErrorCode(error) }, error);
    }
  }

  close(): void {
    closeSync(this.fd);
  }

  /**
   * A path to `name` inside the opened folder. Without /proc, the folder's name is checked to still be the
   * folder opened (same device and inode) right before each use: a swap is refused, never followed.
   */
  private through(name: string): string {
    if (PROC_FD !== undefined) return `${PROC_FD}/${this.fd}/${name}`;
    const own = fstatSync(this.fd);
    let st;
    try {
      st = lstatSync(this.path);
    } catch (error) {
      throw dirOpenError(this.scope, this.path, error);
    }
    if (!st.isDirectory() || st.ino !== own.ino || st.dev !== own.dev) {
      throw unsafeFile(this.scope, this.path, st.isDirectory() ? "another folder than the one opened" : kindOf(st), "the folder phasekit opened");
    }
    return path.join(this.path, name);
  }
}
