/**
 * io/open-name.ts: a name checked against an open fd without a stat of its file (Linux, /proc). Every way the name
 * can stop leading to the file makes the watch say false (the caller then stats the name); where it cannot tell,
 * there is no watch. And the run log's holder, which checks its segment's name twice a step, no longer stats it.
 */
import { describe, expect, it } from "vitest";
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, renameSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import type * as FsModule from "node:fs";
import { createRequire, syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { watchOpenName } from "../src/io/open-name.js";
import { openRunLog } from "../src/store/run-log/run-log.js";

const linux = process.platform === "linux";
// The CommonJS face of node:fs, whose functions can be swapped (syncBuiltinESMExports then updates the ESM one).
const fs = createRequire(import.meta.url)("node:fs") as { -readonly [K in keyof typeof FsModule]: (typeof FsModule)[K] };
const temp = (): string => mkdtempSync(path.join(tmpdir(), "phasekit-open-name-"));

function opened(): { dir: string; file: string; fd: number } {
  const dir = path.join(temp(), "runlog");
  mkdirSync(dir);
  const file = path.join(dir, "0000000001.seg");
  const fd = openSync(file, "wx+");
  return { dir, file, fd };
}

describe.runIf(linux)("watchOpenName (Linux)", () => {
  it("says true while the name leads to the fd's file", () => {
    const { file, fd } = opened();
    const watch = watchOpenName(fd, file);
    expect(watch).toBeDefined();
    expect(watch?.()).toBe(true);
    closeSync(fd);
  });

  const changes: Array<[string, (c: { dir: string; file: string }) => void]> = [
    ["the file renamed away", ({ file }) => renameSync(file, `${file}.moved`)],
    ["the file unlinked", ({ file }) => unlinkSync(file)],
    ["another file renamed over the name", ({ file }) => (writeFileSync(`${file}.new`, "x"), renameSync(`${file}.new`, file))],
    ["a symlink to the file in its place", ({ file }) => (renameSync(file, `${file}.real`), symlinkSync(`${file}.real`, file))],
    ["its folder renamed away", ({ dir }) => renameSync(dir, `${dir}.moved`)],
    ["its folder replaced by a symlink to the moved folder", ({ dir }) => (renameSync(dir, `${dir}.real`), symlinkSync(`${dir}.real`, dir))],
    ["its folder replaced by another folder holding a file of the same name", ({ dir, file }) => (renameSync(dir, `${dir}.old`), mkdirSync(dir), writeFileSync(file, ""))],
  ];
  for (const [what, change] of changes) {
    it(`says false after ${what}`, () => {
      const c = opened();
      const watch = watchOpenName(c.fd, c.file);
      expect(watch?.()).toBe(true);
      change(c);
      expect(watch?.()).toBe(false);
      closeSync(c.fd);
    });
  }

  it("gives no watch for a name reached through a symlink, or one that does not lead to the fd's file", () => {
    const { dir, file, fd } = opened();
    const alias = path.join(path.dirname(dir), "alias");
    symlinkSync(dir, alias);
    expect(watchOpenName(fd, path.join(alias, path.basename(file)))).toBeUndefined();
    writeFileSync(`${file}.other`, "");
    expect(watchOpenName(fd, `${file}.other`)).toBeUndefined();
    closeSync(fd);
  });
});

describe.runIf(linux)("the run log's holder checks its segment's name without a stat of it", () => {
  it("steps stat the control files but never the segment; a replaced segment is still refused", async () => {
    const runDir = temp();
    const log = await openRunLog({ runDir, inlineMax: 4096 });
    const statted: string[] = [];
    const lstat = fs.lstatSync;
    const stat = fs.statSync;
    fs.lstatSync = ((p: FsModule.PathLike, o?: FsModule.StatSyncOptions) => (statted.push(String(p)), lstat(p, o))) as typeof fs.lstatSync;
    fs.statSync = ((p: FsModule.PathLike, o?: FsModule.StatSyncOptions) => (statted.push(String(p)), stat(p, o))) as typeof fs.statSync;
    syncBuiltinESMExports();
    try {
      for (let i = 0; i < 5; i++) await log.step(`s${i}`, { i }, () => ({ i }));
    } finally {
      fs.lstatSync = lstat;
      fs.statSync = stat;
      syncBuiltinESMExports();
    }
    expect(statted.filter((p) => p.endsWith(".seg"))).toEqual([]);
    // The watch is what answered: replacing the segment is still caught before the next body runs.
    const seg = path.join(runDir, "runlog", readdirSync(path.join(runDir, "runlog")).find((n) => n.endsWith(".seg")) as string);
    renameSync(seg, `${seg}.moved`);
    writeFileSync(seg, "");
    let ran = false;
    await expect(log.step("after", {}, () => (ran = true))).rejects.toMatchObject({ code: "UNSAFE_FILE" });
    expect(ran).toBe(false);
    await log.close();
  });
});
