import { describe, it, expect } from "vitest";
import { mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync, appendFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { openRunLog } from "../src/store/run-log/run-log.js";
import { loadChain } from "../src/store/run-log/read-chain.js";
import { ValueFiles } from "../src/store/run-log/values.js";
import { applyDelta, diffJson } from "../src/store/run-log/state-delta.js";
import type { JsonValue } from "../src/io/plain-json.js";

const temp = (): string => mkdtempSync(path.join(tmpdir(), "phasekit-runlog-"));
const logDir = (runDir: string): string => path.join(runDir, "runlog");

describe("run log: steps", () => {
  it("reuses a completed step after reopening, reruns on a changed input, and says why", async () => {
    const runDir = temp();
    const a = await openRunLog({ runDir });
    let calls = 0;
    const first = await a.step("s1", { x: 1 }, () => (calls++, { out: "one" }));
    expect(first).toMatchObject({ reused: false, reason: "no-record", output: { out: "one" } });
    await a.close();
    const b = await openRunLog({ runDir });
    expect(b.epoch).toBe(2);
    expect(await b.step("s1", { x: 1 }, () => (calls++, { out: "other" }))).toMatchObject({ reused: true, output: { out: "one" } });
    expect(await b.step("s1", { x: 2 }, () => (calls++, { out: "two" }))).toMatchObject({ reused: false, reason: "input-changed" });
    expect(calls).toBe(2);
    await b.close();
  });

  it("stores a void output as null and reuses it instead of rerunning the side effect", async () => {
    const runDir = temp();
    let effects = 0;
    const a = await openRunLog({ runDir });
    await a.step("mail", {}, () => void effects++);
    await a.close();
    const b = await openRunLog({ runDir });
    expect(await b.step("mail", {}, () => void effects++)).toMatchObject({ reused: true, output: null });
    expect(effects).toBe(1);
    await b.close();
  });

  it("runs parallel steps with one group-committed sync and reuses all of them", async () => {
    const runDir = temp();
    const a = await openRunLog({ runDir });
    const outs = await Promise.all(Array.from({ length: 8 }, (_, i) => a.step(`p${i}`, { i }, async () => ({ i }))));
    expect(outs.every((o) => !o.reused)).toBe(true);
    await a.close();
    const b = await openRunLog({ runDir });
    const again = await Promise.all(Array.from({ length: 8 }, (_, i) => b.step(`p${i}`, { i }, () => ({ i: -1 }))));
    expect(again.map((o) => o.output)).toEqual(Array.from({ length: 8 }, (_, i) => ({ i })));
    await b.close();
  });

  it("reruns a failed step with the next attempt number, and a started one after a crash", async () => {
    const runDir = temp();
    const a = await openRunLog({ runDir });
    await expect(a.step("f", {}, () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(a.entry("f")).toMatchObject({ status: "failed", attempt: 1 });
    await a.close();
    const b = await openRunLog({ runDir });
    expect(await b.step("f", {}, () => 1)).toMatchObject({ reused: false, reason: "failed", entry: { attempt: 2 } });
    await b.close();
  });

  it("keeps large outputs in content-addressed artifacts and reruns when one is tampered with", async () => {
    const runDir = temp();
    const big = { text: "x".repeat(100) };
    const a = await openRunLog({ runDir, inlineMax: 50 });
    const r = await a.step("big", {}, () => big);
    expect(r.entry.artifact).toMatch(/^artifacts\/[0-9a-f]{64}-0000000001\.json$/);
    await a.close();
    writeFileSync(path.join(runDir, r.entry.artifact as string), JSON.stringify({ text: "forged" }));
    const b = await openRunLog({ runDir, inlineMax: 50 });
    expect(await b.step("big", {}, () => big)).toMatchObject({ reused: false, reason: "artifact-corrupt" });
    await b.close();
  });

  it("ignores a torn tail, and refuses a corrupt complete line with a typed error naming the file", async () => {
    const runDir = temp();
    const a = await openRunLog({ runDir });
    await a.step("s", {}, () => 1);
    await a.close();
    const seg = path.join(logDir(runDir), "0000000001.seg");
    appendFileSync(seg, '{"t":"done","e":1,"k":"s2"');
    const b = await openRunLog({ runDir });
    expect(b.entry("s")?.status).toBe("completed");
    expect(b.entry("s2")).toBeUndefined();
    await b.close();
    appendFileSync(path.join(logDir(runDir), "0000000002.seg"), "garbage\n");
    await expect(openRunLog({ runDir })).rejects.toMatchObject({ code: "CORRUPT_FILE", details: { file: path.join(logDir(runDir), "0000000002.seg") } });
  });

  it("refuses a symlinked segment and leaves its target untouched", async () => {
    const runDir = temp();
    const outside = path.join(temp(), "victim.txt");
    writeFileSync(outside, "keep me\n");
    mkdirSync(logDir(runDir));
    symlinkSync(outside, path.join(logDir(runDir), "0000000001.seg"));
    await expect(openRunLog({ runDir })).rejects.toMatchObject({ code: "UNSAFE_FILE" });
    expect(readFileSync(outside, "utf8")).toBe("keep me\n");
  });
});

describe("run log: fencing", () => {
  it("a displaced holder's writes are refused with LOCK_LOST and never become visible", async () => {
    const runDir = temp();
    const old = await openRunLog({ runDir });
    await old.step("a", {}, () => "old-a");
    const fresh = await openRunLog({ runDir });
    expect(fresh.epoch).toBe(old.epoch + 1);
    await fresh.step("b", {}, () => "new-b");
    await expect(old.step("b", {}, () => "old-b")).rejects.toMatchObject({ code: "LOCK_LOST" });
    await expect(old.step("c", {}, () => "old-c")).rejects.toMatchObject({ code: "LOCK_LOST" });
    const view = await loadChain(logDir(runDir), new ValueFiles());
    expect([...view.index.steps.keys()].sort()).toEqual(["a", "b"]);
    expect(view.index.steps.get("b")?.epoch).toBe(fresh.epoch);
    await old.close();
    await fresh.close();
  });

  it("a displaced holder cannot compact: nothing of the new holder is deleted", async () => {
    const runDir = temp();
    const old = await openRunLog({ runDir, inlineMax: 10 });
    await old.step("a", {}, () => "old-a-long-output");
    const fresh = await openRunLog({ runDir, inlineMax: 10 });
    await fresh.step("b", {}, () => "new-b-long-output");
    await expect(old.compact()).rejects.toMatchObject({ code: "LOCK_LOST" });
    expect(readdirSync(path.join(runDir, "artifacts"))).toHaveLength(2);
    expect(readdirSync(logDir(runDir)).sort()).toEqual(["0000000001.seg", "0000000002.seg"]);
    await fresh.close();
  });
});

describe("run log: compaction and states", () => {
  it("compacts into a snapshot, deletes only superseded files, and keeps every live output", async () => {
    const runDir = temp();
    const a = await openRunLog({ runDir, inlineMax: 40 });
    for (let i = 0; i < 5; i++) await a.step("s", { i }, () => ({ i, pad: "p".repeat(i * 20) }));
    await a.step("t", {}, () => "kept");
    await a.close();
    const b = await openRunLog({ runDir, inlineMax: 40 });
    const report = await b.compact();
    expect(report).toMatchObject({ segmentsRemoved: 1, recordsAfter: 2 });
    expect(report.artifactsRemoved).toBeGreaterThan(0);
    expect(await b.step("t", {}, () => "rerun")).toMatchObject({ reused: true, output: "kept" });
    await b.close();
    const c = await openRunLog({ runDir, inlineMax: 40 });
    expect(await c.step("s", { i: 4 }, () => null)).toMatchObject({ reused: true, output: { i: 4 } });
    await c.close();
  });

  it("stores 1,000 states of 10 KB with ~200 B changed each in well under 1 MiB, and rebuilds the last", async () => {
    const runDir = temp();
    const a = await openRunLog({ runDir });
    const state: Record<string, string> = {};
    for (let k = 0; k < 50; k++) state[`k${k}`] = "v".repeat(200);
    for (let i = 0; i < 1000; i++) {
      state[`k${i % 50}`] = `${i}`.padEnd(200, "w");
      await a.putState({ ...state });
    }
    await a.close();
    const bytes = readdirSync(logDir(runDir)).reduce((n, f) => n + statSync(path.join(logDir(runDir), f)).size, 0);
    expect(bytes).toBeLessThan(1024 * 1024);
    const b = await openRunLog({ runDir });
    expect(b.state()).toEqual(state);
    await b.close();
  });

  it("diff then apply gives the new state exactly (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        const from = a as JsonValue;
        const to = b as JsonValue;
        expect(applyDelta(from, diffJson(from, to))).toEqual(to);
      }),
      { numRuns: process.env.CI === "true" ? 2000 : 300 },
    );
  });
});

describe("run log: lazily parsed step headers", () => {
  it("a step line whose header is bad past its key opens, and using that step is a typed CORRUPT_FILE naming the file", async () => {
    const runDir = temp();
    const a = await openRunLog({ runDir });
    await a.step("ok", {}, () => 1);
    await a.close();
    const seg = path.join(logDir(runDir), "0000000001.seg");
    appendFileSync(seg, '{"t":"done","e":1,"k":"bad","in":5}\n');
    const b = await openRunLog({ runDir });
    expect(await b.step("ok", {}, () => 2)).toMatchObject({ reused: true, output: 1 });
    await expect(b.step("bad", {}, () => 3)).rejects.toMatchObject({ code: "CORRUPT_FILE", details: { file: seg } });
    await b.close();
  });

  it("a step line of another epoch inside a segment is refused at open (the scan reads the epoch)", async () => {
    const runDir = temp();
    const a = await openRunLog({ runDir });
    // A claim that writes nothing leaves no segment: write one record, so the segment stays.
    await a.putState({ n: 1 });
    await a.close();
    appendFileSync(path.join(logDir(runDir), "0000000001.seg"), '{"t":"start","e":7,"k":"x","in":"f","a":1}\n');
    await expect(openRunLog({ runDir })).rejects.toMatchObject({ code: "CORRUPT_FILE", message: expect.stringContaining("epoch 7") });
  });
});

describe("run log: snapshots", () => {
  it("a snapshot keeps values after its index (opening reads the index only) and a cut snapshot is CORRUPT_FILE", async () => {
    const runDir = temp();
    const a = await openRunLog({ runDir });
    for (let i = 0; i < 20; i++) await a.step(`s${i}`, { i }, () => ({ i, text: `v${i}`.repeat(20) }));
    await a.putState({ n: 20 });
    const report = await a.compact();
    await a.close();
    const snap = path.join(logDir(runDir), report.snapshot);
    const bytes = readFileSync(snap);
    const head = JSON.parse(bytes.toString("utf8", 0, bytes.indexOf(10))) as { idx: number; size: number };
    expect(head.size).toBe(bytes.length);
    expect(bytes.subarray(0, head.idx).includes(Buffer.from("v19v19"))).toBe(false);
    const b = await openRunLog({ runDir });
    for (let i = 0; i < 20; i++) expect((await b.step(`s${i}`, { i }, () => null)).output).toEqual({ i, text: `v${i}`.repeat(20) });
    expect(b.state()).toEqual({ n: 20 });
    await b.close();
    writeFileSync(snap, bytes.subarray(0, bytes.length - 5));
    await expect(openRunLog({ runDir })).rejects.toMatchObject({ code: "CORRUPT_FILE", details: { file: snap } });
  });

  it("a failed attempt counts in a compaction's records as the holder writes it, as it does when the log is read again", async () => {
    const attempts = async (runDir: string) => {
      const log = await openRunLog({ runDir });
      for (let i = 0; i < 3; i++) await expect(log.step("f", {}, () => Promise.reject(new Error("no")))).rejects.toThrow("no");
      await log.step("ok", {}, () => 1);
      return log;
    };
    const holder = await attempts(temp());
    const live = await holder.compact();
    await holder.close();
    const runDir = temp();
    await (await attempts(runDir)).close();
    const reread = await openRunLog({ runDir });
    expect(live.recordsBefore).toBe((await reread.compact()).recordsBefore);
    expect(live.recordsBefore).toBe(8);
    await reread.close();
  });

  it("a holder displaced by a newer epoch never starts a step's work: LOCK_LOST before fn", async () => {
    const runDir = temp();
    const a = await openRunLog({ runDir });
    await a.step("before", {}, () => 1);
    const b = await openRunLog({ runDir });
    let ran = 0;
    await expect(a.step("after", {}, () => ++ran)).rejects.toMatchObject({ code: "LOCK_LOST" });
    expect(ran).toBe(0);
    expect(b.entry("after")).toBeUndefined();
    expect(await b.step("after", {}, () => "b's")).toMatchObject({ reused: false, reason: "no-record", output: "b's" });
    await a.close();
    await b.close();
  });
});
