import { describe, it, expect } from "vitest";
import { appendFileSync, mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { openRunLog } from "../src/store/run-log/run-log.js";

const temp = (): string => mkdtempSync(path.join(tmpdir(), "phasekit-segread-"));
const seg = (runDir: string, epoch: number): string => path.join(runDir, "runlog", `${String(epoch).padStart(10, "0")}.seg`);
const rerun = (): never => {
  throw new Error("a completed step was rerun");
};

describe("run log: opening reads a segment from its last compaction on", () => {
  it("what a compaction superseded is not read (a damaged line before the base does not stop the open)", async () => {
    const runDir = temp();
    const a = await openRunLog({ runDir });
    await a.step("x", {}, () => "x");
    appendFileSync(seg(runDir, 1), "not json\n");
    await a.compact();
    await a.step("y", {}, () => "y");
    await a.close();
    const b = await openRunLog({ runDir });
    expect(await b.step("x", {}, rerun)).toMatchObject({ reused: true, output: "x" });
    expect(await b.step("y", {}, rerun)).toMatchObject({ reused: true, output: "y" });
    await b.close();
  });

  it("a base line torn by a crash is no compaction: the history before it is read", async () => {
    const runDir = temp();
    const a = await openRunLog({ runDir });
    await a.step("x", {}, () => "x");
    await a.compact();
    await a.step("y", {}, () => "y");
    await a.close();
    appendFileSync(seg(runDir, 1), '{"t":"base","e":1,"snap":"snap-00000');
    const b = await openRunLog({ runDir });
    expect(await b.step("x", {}, rerun)).toMatchObject({ reused: true, output: "x" });
    expect(await b.step("y", {}, rerun)).toMatchObject({ reused: true, output: "y" });
    await b.close();
  });

  it("finds a base line hundreds of kilobytes before the end (the backward search crosses read chunks)", async () => {
    const runDir = temp();
    const a = await openRunLog({ runDir, inlineMax: 1 << 20 });
    await a.step("early", {}, () => "early");
    await a.compact();
    // Outputs unlike each other (no delta pays), so the segment holds them whole.
    for (let i = 0; i < 6; i++) await a.step(`big${i}`, { i }, () => String(i).repeat(100_000));
    await a.close();
    expect(statSync(seg(runDir, 1)).size).toBeGreaterThan(600_000);
    const b = await openRunLog({ runDir, inlineMax: 1 << 20 });
    expect(await b.step("early", {}, rerun)).toMatchObject({ reused: true, output: "early" });
    for (let i = 0; i < 6; i++) expect((await b.step(`big${i}`, { i }, rerun)).output).toHaveLength(100_000);
    expect(b.entries()).toHaveLength(7);
    await b.close();
  });

  it("a step line of another epoch after the base is still refused", async () => {
    const runDir = temp();
    const a = await openRunLog({ runDir });
    await a.step("x", {}, () => "x");
    await a.compact();
    await a.close();
    appendFileSync(seg(runDir, 1), '{"t":"start","e":7,"k":"z","in":"f","a":1}\n');
    await expect(openRunLog({ runDir })).rejects.toMatchObject({ code: "CORRUPT_FILE", message: expect.stringContaining("epoch 7") });
  });
});
