/**
 * A live segment's zero-filled room under attack (segment-file.ts, docs/decisions.md D14 "Room"): bytes, a
 * newline or a forged record planted into the room or where the next record lands, the segment's name swapped
 * for a symlink or a FIFO, the cut at close failing or racing a newer holder, the segment cap. What must hold:
 * no acknowledged record is lost, no planted one is accepted once the holder closed, damage seen meanwhile is
 * CORRUPT_FILE naming the segment (bytes planted past the room's first zero are never read), and a closed
 * history holds no zeros.
 */
import { describe, expect, it } from "vitest";
import { execFileSync, spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, renameSync, statSync, symlinkSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { MAX_FILE_BYTES } from "../src/io/safe-open.js";
import { openRunLog, type RunLog } from "../src/store/run-log/run-log.js";
import { readRunLog } from "../src/store/run-log/reader.js";
import { FOLD_AT_SEGMENTS } from "../src/store/run-log/fold.js";
import { ROOM_BYTES, SegmentFile } from "../src/store/run-log/segment-file.js";

const CLAIMER = fileURLToPath(new URL("./helpers/runlog-claim-step.mjs", import.meta.url));
const temp = (): string => mkdtempSync(path.join(tmpdir(), "phasekit-room-hostile-"));
const segmentFiles = (runDir: string): string[] =>
  readdirSync(path.join(runDir, "runlog"))
    .filter((n) => n.endsWith(".seg"))
    .sort()
    .map((n) => path.join(runDir, "runlog", n));
/** Where the records of a segment end (after its last newline). */
const recordsEnd = (file: string): number => readFileSync(file).lastIndexOf(0x0a) + 1;
const forgedEvent = (pad = 0): Buffer => Buffer.from(`{"t":"event","e":1,"name":"forged"}\t{"x":666,"pad":"${"f".repeat(pad)}"}\n`);
const plant = (file: string, bytes: Buffer, at: number): void => {
  const fd = openSync(file, "r+");
  try {
    writeSync(fd, bytes, 0, bytes.length, at);
  } finally {
    closeSync(fd);
  }
};
const rerun = (): never => {
  throw new Error("an acknowledged step was rerun");
};

async function stepsAndForged(runDir: string): Promise<{ steps: string[]; forged: number }> {
  const view = await readRunLog(runDir);
  try {
    return { steps: (view?.entries() ?? []).filter((e) => e.status === "completed").map((e) => e.key).sort(), forged: view?.events("forged").length ?? 0 };
  } finally {
    view?.close();
  }
}

async function holder(runDir: string, beforeFsCall?: (name: string) => void): Promise<{ log: RunLog; file: string }> {
  const log = await openRunLog({ runDir, inlineMax: 4096, ...(beforeFsCall === undefined ? {} : { beforeFsCall }) });
  await log.step("a", {}, () => ({ v: "a" }));
  const file = segmentFiles(runDir).at(-1) as string;
  expect(statSync(file).size).toBe(recordsEnd(file) + ROOM_BYTES);
  return { log, file };
}

describe("run log: a live segment's room under attack", () => {
  it("a forged record planted right after the last record is cut off when the holder closes, never accepted", async () => {
    const runDir = temp();
    const { log, file } = await holder(runDir);
    plant(file, forgedEvent(), recordsEnd(file));
    await log.close();
    expect(await stepsAndForged(runDir)).toEqual({ steps: ["a"], forged: 0 });
    expect(statSync(file).size).toBe(recordsEnd(file));
  });

  it("a forged record where the next record lands: overwritten, its leftover is CORRUPT_FILE naming the segment while live, gone at close", async () => {
    const runDir = temp();
    const { log, file } = await holder(runDir);
    // Longer than the holder's next record, so a tail of it is left after that record, ending in its newline.
    plant(file, forgedEvent(2000), recordsEnd(file));
    await log.step("b", {}, () => ({ v: "b" }));
    const error = await readRunLog(runDir).then(
      (v) => (v?.close(), undefined),
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: "CORRUPT_FILE", details: { file } });
    await log.step("c", {}, () => ({ v: "c" }));
    await log.close();
    expect(await stepsAndForged(runDir)).toEqual({ steps: ["a", "b", "c"], forged: 0 });
    expect(statSync(file).size).toBe(recordsEnd(file));
  });

  it("a newline planted deep in the room is never read: while live the room's zeros end the lines; the holder's records all read after close", async () => {
    const runDir = temp();
    const { log, file } = await holder(runDir);
    plant(file, Buffer.from("\n"), recordsEnd(file) + 100_000);
    await log.step("b", {}, () => ({ v: "b" }));
    expect(await stepsAndForged(runDir)).toEqual({ steps: ["a", "b"], forged: 0 });
    await log.close();
    expect(await stepsAndForged(runDir)).toEqual({ steps: ["a", "b"], forged: 0 });
  });

  it.each(["symlink", "fifo"])("the segment's name swapped for a %s: UNSAFE_FILE naming it, and the cut at close touches only the holder's own file", async (kind) => {
    const runDir = temp();
    const { log, file } = await holder(runDir);
    const victim = path.join(runDir, "victim.txt");
    writeFileSync(victim, "precious bytes\n");
    renameSync(file, path.join(runDir, "moved-aside.seg"));
    if (kind === "symlink") symlinkSync(victim, file);
    else execFileSync("mkfifo", [file]);
    await expect(log.step("b", {}, () => ({ v: "b" }))).rejects.toMatchObject({ code: "UNSAFE_FILE", details: { file } });
    await log.close();
    expect(readFileSync(victim, "utf8")).toBe("precious bytes\n");
    // The holder's own file was cut to its records through its descriptor, wherever it now is.
    const own = path.join(runDir, "moved-aside.seg");
    expect(statSync(own).size).toBe(recordsEnd(own));
  });

  it("a cut at close that fails leaves the room as a torn tail: nothing is lost, the next holder pins only the records", async () => {
    const runDir = temp();
    const { log, file } = await holder(runDir, (name) => {
      if (name === "ftruncate(room)") throw Object.assign(new Error("EIO: planted"), { code: "EIO" });
    });
    await log.step("b", {}, () => ({ v: "b" }));
    await log.close();
    const records = recordsEnd(file);
    expect(statSync(file).size).toBeGreaterThan(records);
    expect(readFileSync(file).subarray(records).every((b) => b === 0)).toBe(true);
    const next = await openRunLog({ runDir, inlineMax: 4096 });
    expect((await next.step("a", {}, rerun)).reused).toBe(true);
    expect((await next.step("b", {}, rerun)).reused).toBe(true);
    await next.step("c", {}, () => ({ v: "c" }));
    await next.close();
    const head = JSON.parse(readFileSync(segmentFiles(runDir)[1] as string, "utf8").split("\n")[0] as string) as { pins: number[][] };
    expect(head.pins[0]?.[2]).toBe(records);
    expect(await stepsAndForged(runDir)).toEqual({ steps: ["a", "b", "c"], forged: 0 });
  });

  it("a newer holder that claims while the old one is about to cut its room at close keeps everything it acknowledged", async () => {
    const runDir = temp();
    let claimed = "";
    const { log } = await holder(runDir, (name) => {
      // Frozen right before the cut (as under SIGSTOP): a newer holder claims, acknowledges x and closes.
      if (name === "ftruncate(room)" && claimed === "") claimed = spawnSync(process.execPath, [CLAIMER, runDir], { encoding: "utf8" }).stdout.trim();
    });
    await log.step("b", {}, () => ({ v: "b" }));
    await log.close();
    expect(claimed).toBe("ok 2");
    expect(await stepsAndForged(runDir)).toEqual({ steps: ["a", "b", "x"], forged: 0 });
    const next = await openRunLog({ runDir, inlineMax: 4096 });
    for (const k of ["a", "b", "x"]) expect((await next.step(k, {}, rerun)).reused).toBe(true);
    await next.close();
  });

  it("near the segment cap the room stops at the cap, and a record past it is FILE_TOO_LARGE naming the segment, nothing written", () => {
    const file = path.join(temp(), "0000000001.seg");
    const fd = openSync(file, "w+");
    try {
      // Sparse: only the size matters here.
      const start = MAX_FILE_BYTES.log - 1000;
      writeFileSync(fd, "");
      execFileSync("truncate", ["-s", String(start), file]);
      const bytes = new SegmentFile(fd, file, start, () => undefined);
      bytes.write(Buffer.from(`${"r".repeat(499)}\n`), true);
      expect(statSync(file).size).toBe(MAX_FILE_BYTES.log);
      bytes.write(Buffer.from(`${"s".repeat(499)}\n`), true);
      expect(statSync(file).size).toBe(MAX_FILE_BYTES.log);
      expect(() => bytes.write(Buffer.from("t\n"), true)).toThrow(expect.objectContaining({ code: "FILE_TOO_LARGE", details: expect.objectContaining({ file }) }));
      expect(statSync(file).size).toBe(MAX_FILE_BYTES.log);
      bytes.trimRoom();
      expect(statSync(file).size).toBe(MAX_FILE_BYTES.log);
    } finally {
      closeSync(fd);
    }
  });

  it("a closed history holds no zeros: steps, events, states, a compaction, a void claim, a fold, a crashed holder's room", async () => {
    const runDir = temp();
    const crashed = await openRunLog({ runDir, inlineMax: 4096 });
    await crashed.step("dead", {}, () => ({ v: "dead" }));
    const crashedFile = segmentFiles(runDir)[0] as string;
    // Never closed: its room stays until a fold removes its segment.
    for (let i = 0; i < FOLD_AT_SEGMENTS; i++) {
      const log = await openRunLog({ runDir, inlineMax: 4096 });
      await log.step(`s${i}`, { i }, () => ({ i, pad: "p".repeat(300) }));
      await log.event("note", { i });
      await log.putState({ i });
      if (i === 1) await log.compact();
      await log.close();
      const reader = await openRunLog({ runDir, inlineMax: 4096 });
      await reader.close();
    }
    // The last writer found FOLD_AT_SEGMENTS segments and folded: the crashed holder's segment, room and all, is gone.
    expect(existsSync(crashedFile)).toBe(false);
    for (const file of segmentFiles(runDir)) expect(statSync(file).size, file).toBe(recordsEnd(file));
    const next = await openRunLog({ runDir, inlineMax: 4096 });
    expect((await next.step("dead", {}, rerun)).reused).toBe(true);
    await next.close();
    await crashed.close();
  });
});
