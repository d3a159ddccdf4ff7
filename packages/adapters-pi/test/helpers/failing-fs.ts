/** An FsPort that counts every call (handle methods included) and fails the Nth one with an errno-style error. */
import { nodeFs, type FsFileHandle, type FsPort } from "../../src/io/fs-port.js";

export interface FailingFs {
  fs: FsPort;
  /** Calls made so far. */
  calls(): number;
  /** Names of the calls made so far, in order. */
  log: string[];
}

/** Fails call number `failAt` (1-based; 0 = never) with `code`; a failing `write` may instead write short. */
export function failingFs(failAt: number, code = "EIO"): FailingFs {
  let n = 0;
  const log: string[] = [];
  const tick = (name: string): void => {
    n++;
    log.push(name);
    if (n === failAt) throw Object.assign(new Error(`injected ${code} at call ${n} (${name})`), { code });
  };
  const wrapHandle = (h: FsFileHandle): FsFileHandle => ({
    fd: h.fd,
    write: async (b, o, l, p) => (tick("handle.write"), h.write(b, o, l, p)),
    sync: async () => (tick("handle.sync"), h.sync()),
    datasync: async () => (tick("handle.datasync"), h.datasync()),
    stat: async () => (tick("handle.stat"), h.stat()),
    truncate: async (len) => (tick("handle.truncate"), h.truncate(len)),
    readFile: async () => (tick("handle.readFile"), h.readFile()),
    close: async () => {
      // A failed close still releases the descriptor, as the kernel does.
      try {
        tick("handle.close");
      } finally {
        await h.close();
      }
    },
  });
  const fs: FsPort = {
    ...nodeFs,
    open: async (p, f, m) => (tick("open"), wrapHandle(await nodeFs.open(p, f, m))),
    rename: async (a, b) => (tick("rename"), nodeFs.rename(a, b)),
    unlink: async (p) => nodeFs.unlink(p), // cleanup path: never failed, so the test can assert no temp file is left
    readFile: async (p) => (tick("readFile"), nodeFs.readFile(p)),
    readdir: async (p) => (tick("readdir"), nodeFs.readdir(p)),
    mkdir: async (p, o) => (tick("mkdir"), nodeFs.mkdir(p, o)),
    lstat: async (p) => (tick("lstat"), nodeFs.lstat(p)),
  };
  return { fs, calls: () => n, log };
}
