/**
 * Opening run-log files without following a planted link or blocking on a FIFO: O_NOFOLLOW | O_NONBLOCK, then
 * fstat must say "regular file". Every open of the run log goes through here.
 */
import { closeSync, constants, fstatSync, openSync, promises as fsp, readSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { workflowError } from "@phasekit/core";

const { O_RDONLY, O_RDWR, O_WRONLY, O_CREAT, O_EXCL, O_APPEND, O_NOFOLLOW, O_NONBLOCK } = constants;

/** Largest run-log file read whole (a segment or snapshot beyond it is refused, not read into a string). */
export const MAX_LOG_FILE_BYTES = 256 * 1024 * 1024;

/** How to open: read, append to a new file (fails if it exists), or write a new file. */
export type SafeOpenMode = "read" | "create-append" | "create";

const FLAGS: Record<SafeOpenMode, number> = {
  read: O_RDONLY | O_NOFOLLOW | O_NONBLOCK,
  "create-append": O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK,
  create: O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK,
};

/** Opens `file` as a regular file; a link, FIFO, device or folder there is a typed UNSAFE_PATH-style error. */
export async function openRegular(file: string, mode: SafeOpenMode): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await fsp.open(file, FLAGS[mode], 0o600);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ELOOP" || code === "ENXIO") throw notRegular(file, code === "ELOOP" ? "a symbolic link" : "a FIFO or socket", error);
    throw error;
  }
  const st = await handle.stat().catch(async (error: unknown) => {
    await handle.close();
    throw error;
  });
  if (!st.isFile()) {
    await handle.close();
    throw notRegular(file, "not a regular file");
  }
  return handle;
}

/**
 * The whole of a regular file, refused beyond MAX_LOG_FILE_BYTES. Read with synchronous calls into one buffer
 * of the file's size: the thread pool's 512 KiB chunks made reading a 12 MB segment most of the cost of opening.
 */
export async function readRegular(file: string): Promise<Buffer> {
  const fd = openRegularSync(file);
  try {
    const size = fstatSync(fd).size;
    if (size > MAX_LOG_FILE_BYTES) {
      throw workflowError("run-log", "FILE_TOO_LARGE", `${file} is ${size} bytes, more than a run-log file may hold.`, {
        file,
        value: size,
        hint: "move the run folder aside; phasekit never writes files this large",
      });
    }
    const buf = Buffer.allocUnsafe(size);
    let got = 0;
    while (got < size) {
      const n = readSync(fd, buf, got, size - got, got);
      if (n === 0) break;
      got += n;
    }
    return got === size ? buf : buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

/** A read descriptor of the regular file `file` (no link followed, no FIFO blocked on); the caller closes it. */
export function openRegularSync(file: string): number {
  let fd: number;
  try {
    fd = openSync(file, FLAGS.read);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ELOOP" || code === "ENXIO") throw notRegular(file, code === "ELOOP" ? "a symbolic link" : "a FIFO or socket", error);
    throw error;
  }
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    throw notRegular(file, "not a regular file");
  }
  return fd;
}

/** `length` bytes of `fd` from `offset` (fewer only at the end of the file). */
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

function notRegular(file: string, what: string, cause?: unknown): Error {
  return workflowError("run-log", "UNSAFE_FILE", `${file} is ${what}; the run log opens only regular files.`, {
    file,
    hint: "remove what was planted there; phasekit left it untouched",
  }, cause);
}

/** fsyncs a folder so the names created in it survive a power cut. */
export async function syncDir(dir: string): Promise<void> {
  const h = await fsp.open(dir, O_RDONLY | O_NOFOLLOW);
  try {
    await h.sync();
  } finally {
    await h.close();
  }
}
