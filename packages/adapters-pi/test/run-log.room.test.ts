/**
 * A segment's zero-filled room (segment-writer.ts): durable records are written into zeros their file already
 * holds, so a sync carries no size change; readers, claims and a crash treat the room as a torn tail; close cuts
 * it off; a failed write cuts it back with the record.
 */
import { describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { openRunLog } from "../src/store/run-log/run-log.js";
import { loadChain } from "../src/store/run-log/read-chain.js";
import { ROOM_BYTES } from "../src/store/run-log/segment-writer.js";
import { ValueFiles } from "../src/store/run-log/values.js";

const temp = (): string => mkdtempSync(path.join(tmpdir(), "phasekit-room-"));
const segments = (runDir: string): string[] => readdirSync(path.join(runDir, "runlog")).filter((n) => n.endsWith(".seg")).sort();

/** The segment's bytes: where its records end (after the last newline) and what follows them. */
function layout(file: string): { records: number; size: number; tailIsZeros: boolean } {
  const bytes = readFileSync(file);
  const records = bytes.lastIndexOf(0x0a) + 1;
  return { records, size: bytes.length, tailIsZeros: bytes.subarray(records).every((b) => b === 0) };
}

async function stepsSeenByReader(runDir: string): Promise<string[]> {
  const values = new ValueFiles();
  try {
    const chain = await loadChain(path.join(runDir, "runlog"), values);
    return [...chain.index.steps.keys()].sort();
  } finally {
    values.close();
  }
}

describe("run log: a segment's zero-filled room", () => {
  it("the first durable record writes room after itself; the next ones land inside it, the file's size unchanged", async () => {
    const runDir = temp();
    const log = await openRunLog({ runDir, inlineMax: 4096 });
    const file = path.join(runDir, "runlog", segments(runDir)[0] as string);
    await log.step("a", {}, () => ({ v: "a".repeat(500) }));
    const first = layout(file);
    expect(first.size).toBe(first.records + ROOM_BYTES);
    expect(first.tailIsZeros).toBe(true);
    for (const k of ["b", "c", "d"]) await log.step(k, {}, () => ({ v: k.repeat(500) }));
    const later = layout(file);
    expect(later.size).toBe(first.size);
    expect(later.records).toBeGreaterThan(first.records + 3 * 500);
    expect(later.tailIsZeros).toBe(true);
    // A reader that is not the holder reads every acknowledged step and stops at the zeros.
    expect(await stepsSeenByReader(runDir)).toEqual(["a", "b", "c", "d"]);
    await log.close();
  });

  it("records that outgrow the room write more room after themselves", async () => {
    const runDir = temp();
    const log = await openRunLog({ runDir, inlineMax: 64 * 1024 });
    const file = path.join(runDir, "runlog", segments(runDir)[0] as string);
    // Unrelated outputs: a delta on an earlier output would keep them small.
    for (let i = 0; i < 10; i++) await log.step(`s${i}`, { i }, () => randomBytes(20 * 1024).toString("hex"));
    const { records, size, tailIsZeros } = layout(file);
    expect(records).toBeGreaterThan(ROOM_BYTES);
    expect(size).toBeGreaterThan(records);
    expect(size - records).toBeLessThanOrEqual(ROOM_BYTES);
    expect(tailIsZeros).toBe(true);
    await log.close();
  });

  it("close cuts the room off: the segment ends with its last record", async () => {
    const runDir = temp();
    const log = await openRunLog({ runDir });
    await log.step("a", {}, () => "a");
    await log.close();
    const file = path.join(runDir, "runlog", segments(runDir)[0] as string);
    const { records, size } = layout(file);
    expect(size).toBe(records);
    expect(statSync(file).size).toBe(records);
  });

  it("a holder that stopped without closing leaves its room; the next holder pins only the records and continues", async () => {
    const runDir = temp();
    const dead = await openRunLog({ runDir, inlineMax: 4096 });
    await dead.step("a", {}, () => "first");
    await dead.step("b", {}, () => "second");
    const deadFile = path.join(runDir, "runlog", segments(runDir)[0] as string);
    const left = layout(deadFile);
    expect(left.size - left.records).toBeGreaterThan(0);
    // The dead holder is never closed (as after a crash); a new holder claims past it.
    const next = await openRunLog({ runDir, inlineMax: 4096 });
    const head = JSON.parse(readFileSync(path.join(runDir, "runlog", segments(runDir)[1] as string), "utf8").split("\n")[0] as string) as { pins: number[][] };
    // Its own epoch's records, up to the last one: not a byte of the zeros after them.
    expect(head.pins).toHaveLength(1);
    expect([head.pins[0]?.[0], head.pins[0]?.[2]]).toEqual([1, left.records]);
    const rerun = (): never => {
      throw new Error("an acknowledged step was rerun");
    };
    expect((await next.step("a", {}, rerun)).output).toBe("first");
    expect((await next.step("b", {}, rerun)).output).toBe("second");
    await next.step("c", {}, () => "third");
    await next.close();
    expect(await stepsSeenByReader(runDir)).toEqual(["a", "b", "c"]);
    // The displaced holder refuses to acknowledge anything more.
    await expect(dead.step("d", {}, () => "late")).rejects.toMatchObject({ code: "LOCK_LOST" });
    await dead.close();
  });

  it("a write that fails inside the room cuts the segment back to its last record, room and all", async () => {
    const runDir = temp();
    let failNext = false;
    const log = await openRunLog({
      runDir,
      inlineMax: 4096,
      beforeFsCall: (name) => {
        if (name === "write" && failNext) {
          failNext = false;
          throw Object.assign(new Error("EIO: planted write failure"), { code: "EIO" });
        }
      },
    });
    const file = path.join(runDir, "runlog", segments(runDir)[0] as string);
    await log.step("a", {}, () => "a");
    const before = layout(file);
    failNext = true;
    // Typed, naming the segment and the cause, and saying nothing of the write is in it.
    await expect(log.step("b", {}, () => "b")).rejects.toMatchObject({ code: "WRITE_FAILED", message: expect.stringMatching(/EIO.*nothing of it is in the segment/), details: { file, errno: "EIO" } });
    expect(statSync(file).size).toBe(before.records);
    // The next durable record writes room again, after the records that were kept.
    await log.step("c", {}, () => "c");
    const after = layout(file);
    expect(after.size).toBe(after.records + ROOM_BYTES);
    await log.close();
    expect(await stepsSeenByReader(runDir)).toEqual(["a", "c"]);
  });
});
