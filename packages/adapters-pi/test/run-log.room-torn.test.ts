/**
 * A record written into a segment's room that only partly reached the disk: a power cut kept a later page of it
 * (its tail and newline) but not the page where it starts, which still holds the room's zeros. The record was
 * never acknowledged (its sync never ended, or the earlier page would be there too), yet the segment then held
 * a complete line of zeros and a record's tail, and every read of the run was CORRUPT_FILE, a resume included:
 * the run could not be read or resumed again. (An append could not leave this on a journaled ext4: the size
 * that covers an unsynced tail is committed only after its data.) A zero byte where a line must start is room
 * never written into, and the complete lines end there, as at the end of the file; inside a range a later head
 * accepted, it is still damage.
 */
import { describe, expect, it } from "vitest";
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { openRunLog } from "../src/store/run-log/run-log.js";
import { readRunLog } from "../src/store/run-log/reader.js";
import { ROOM_BYTES } from "../src/store/run-log/segment-file.js";

const temp = (): string => mkdtempSync(path.join(tmpdir(), "phasekit-room-torn-"));
const PAGE = 4096;
const segment = (runDir: string, i = 0): string => path.join(runDir, "runlog", readdirSync(path.join(runDir, "runlog")).filter((n) => n.endsWith(".seg")).sort()[i] as string);
const zero = (file: string, from: number, to: number): void => {
  const fd = openSync(file, "r+");
  try {
    writeSync(fd, Buffer.alloc(to - from), 0, to - from, from);
  } finally {
    closeSync(fd);
  }
};
/** Start offsets of the segment's lines. */
const lineStarts = (file: string): number[] => {
  const bytes = readFileSync(file);
  const starts = [0];
  for (let i = bytes.indexOf(0x0a); i !== -1 && i + 1 < bytes.length && bytes[i + 1] !== 0; i = bytes.indexOf(0x0a, i + 1)) starts.push(i + 1);
  return starts;
};
const completed = async (runDir: string): Promise<string[]> => {
  const view = await readRunLog(runDir);
  try {
    return (view?.entries() ?? []).filter((e) => e.status === "completed").map((e) => e.key).sort();
  } finally {
    view?.close();
  }
};
const rerun = (): never => {
  throw new Error("an acknowledged step was rerun");
};

describe("run log: a record in the room whose first page never reached the disk", () => {
  it("reads as a torn tail, for readers and for the resume, which pins the records before it and goes on", async () => {
    const runDir = temp();
    const crashed = await openRunLog({ runDir, inlineMax: 65536 });
    await crashed.step("a", {}, () => ({ v: "a".repeat(3000) }));
    await crashed.step("b", {}, () => ({ v: "b".repeat(3000) }));
    const file = segment(runDir);
    // b's done record starts on the first page and ends on the second; the power cut kept only the second.
    const doneB = lineStarts(file).at(-1) as number;
    expect(doneB).toBeLessThan(PAGE);
    expect(readFileSync(file).lastIndexOf(0x0a)).toBeGreaterThan(PAGE);
    zero(file, doneB, PAGE);
    expect(readFileSync(file).length).toBeGreaterThan(ROOM_BYTES);
    expect(await completed(runDir)).toEqual(["a"]);
    const next = await openRunLog({ runDir, inlineMax: 65536 });
    expect((await next.step("a", {}, rerun)).reused).toBe(true);
    expect((await next.step("b", {}, () => ({ v: "b again" }))).reused).toBe(false);
    await next.close();
    const head = JSON.parse(readFileSync(segment(runDir, 1), "utf8").split("\n")[0] as string) as { pins: number[][] };
    expect(head.pins).toEqual([[1, expect.any(Number), doneB]]);
    expect(await completed(runDir)).toEqual(["a", "b"]);
    await crashed.close();
    expect(await completed(runDir)).toEqual(["a", "b"]);
  });

  it("a reader overtaken by the holder's write (zeros, then the record's tail and newline) reads the records before it", async () => {
    const runDir = temp();
    const log = await openRunLog({ runDir, inlineMax: 65536 });
    await log.step("a", {}, () => ({ v: "a" }));
    await log.step("b", {}, () => ({ v: "b" }));
    const file = segment(runDir);
    const bytes = readFileSync(file);
    const doneB = lineStarts(file).at(-1) as number;
    // What a read that copied the record's first half before the holder wrote it, and the rest after, holds.
    zero(file, doneB, doneB + Math.floor((bytes.lastIndexOf(0x0a) - doneB) / 2));
    expect(await completed(runDir)).toEqual(["a"]);
    await log.close();
  });

  it("zeros where a line starts inside a range a later head accepted are still CORRUPT_FILE naming the segment", async () => {
    const runDir = temp();
    const first = await openRunLog({ runDir, inlineMax: 65536 });
    await first.step("a", {}, () => ({ v: "a" }));
    await first.step("b", {}, () => ({ v: "b" }));
    await first.close();
    const next = await openRunLog({ runDir, inlineMax: 65536 });
    await next.step("c", {}, () => ({ v: "c" }));
    await next.close();
    const file = segment(runDir);
    const doneB = lineStarts(file).at(-1) as number;
    zero(file, doneB, doneB + 8);
    await expect(readRunLog(runDir)).rejects.toMatchObject({ code: "CORRUPT_FILE", details: { file } });
  });
});
