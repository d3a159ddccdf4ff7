/**
 * A short write followed by ENOSPC in the middle of an append must leave the log exactly as it was, so the retry
 * that follows starts on a clean line and every later read succeeds (it used to glue the next record onto the
 * half line and make the whole log CORRUPT_FILE).
 */
import { describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { nodeFs, type FsFileHandle, type FsPort } from "../src/io/fs-port.js";
import { openJournal, readJournal } from "../src/store/journal.js";

/** An fs whose next append to `basename` writes half its bytes, then fails with ENOSPC. */
function diskFullOnce(basename: string): { fs: FsPort; arm(): void } {
  let armed = false;
  const wrap = (h: FsFileHandle): FsFileHandle => ({
    ...h,
    fd: h.fd,
    write: async (b, o, l, p) => {
      if (!armed) return h.write(b, o, l, p);
      if (l > 1) return h.write(b, o, Math.floor(l / 2), p);
      armed = false;
      throw Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" });
    },
    sync: () => h.sync(),
    datasync: () => h.datasync(),
    stat: () => h.stat(),
    truncate: (n) => h.truncate(n),
    readFile: () => h.readFile(),
    close: () => h.close(),
  });
  const fs: FsPort = {
    ...nodeFs,
    open: async (p, f, m) => {
      const h = await nodeFs.open(p, f, m);
      return path.basename(p) === basename ? wrap(h) : h;
    },
  };
  return { fs, arm: () => (armed = true) };
}

describe("ENOSPC mid-append, then retry", () => {
  it("journal: the failed append is cut back and the next append reads back with consecutive seqs", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "pk-enospc-j-"));
    const file = path.join(dir, "journal.ndjson");
    const disk = diskFullOnce("journal.ndjson");
    const j = await openJournal(file, { fs: disk.fs });
    await j.append({ generation: 1, at: "t", event: "a" });
    disk.arm();
    await expect(j.append({ generation: 1, at: "t", event: "b", data: { big: "x".repeat(100) } })).rejects.toMatchObject({ code: "WRITE_FAILED" });
    await j.append({ generation: 1, at: "t", event: "c" });
    await j.close();
    const read = await readJournal(file);
    if (!read.ok) throw read.error;
    expect(read.torn).toBe(false);
    expect(read.entries.map((e) => [e.seq, e.event])).toEqual([[1, "a"], [2, "c"]]);
  });
});
