import { describe, it, expect } from "vitest";
import { mkdtempSync, readFileSync, writeFileSync, appendFileSync, unlinkSync, readdirSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { isWorkflowError } from "@phasekit/core";
import { createCheckpointStore, type CheckpointStore } from "../src/store/checkpoints.js";
import { fingerprint } from "../src/store/fingerprint.js";
import { failingFs } from "./helpers/failing-fs.js";
import { nodeFs, type FsPort } from "../src/io/fs-port.js";

let tick = 0;
const now = () => new Date(Date.UTC(2026, 0, 1) + ++tick * 1000);
const fresh = () => mkdtempSync(path.join(tmpdir(), "phasekit-ckpt-"));
const open = (runDir: string, extra: Partial<Parameters<typeof createCheckpointStore>[0]> = {}): CheckpointStore =>
  createCheckpointStore({ runDir, now, ...extra });
const logLines = (runDir: string) => readFileSync(path.join(runDir, "checkpoints.ndjson"), "utf8").split("\n").filter(Boolean);
const artifactFiles = (runDir: string) => (existsSync(path.join(runDir, "artifacts")) ? readdirSync(path.join(runDir, "artifacts")).sort() : []);

function counted<T>(value: T) {
  const fn = () => {
    fn.calls++;
    return value;
  };
  fn.calls = 0;
  return fn;
}

describe("checkpoint store: step", () => {
  it("reuses a completed step with the same input without running fn, across store instances", async () => {
    const runDir = fresh();
    const fn = counted({ plan: ["a", "b"], n: 1 });
    const first = await open(runDir).step("plan", { goal: "x", n: 1 }, fn);
    expect(first).toMatchObject({ reused: false, reason: "no-record", output: { plan: ["a", "b"], n: 1 } });
    expect(first.record).toMatchObject({ status: "completed", attempt: 1, inputFingerprint: fingerprint({ n: 1, goal: "x" }) });
    const again = await open(runDir).step("plan", { n: 1, goal: "x" }, fn);
    expect(again).toMatchObject({ reused: true, output: { plan: ["a", "b"], n: 1 } });
    expect(fn.calls).toBe(1);
  });

  it("reruns a changed input, a missing artifact and a corrupt artifact, and says why", async () => {
    const runDir = fresh();
    const fn = counted({ out: 1 });
    await open(runDir).step("s", { in: 1 }, fn);
    expect(await open(runDir).step("s", { in: 2 }, fn)).toMatchObject({ reused: false, reason: "input-changed" });
    const record = await open(runDir).record("s");
    const artifact = path.join(runDir, record!.artifact!);
    unlinkSync(artifact);
    expect(await open(runDir).step("s", { in: 2 }, fn)).toMatchObject({ reused: false, reason: "artifact-missing", output: { out: 1 } });
    writeFileSync(artifact, readFileSync(artifact, "utf8").replace("1", "2"));
    expect(await open(runDir).step("s", { in: 2 }, fn)).toMatchObject({ reused: false, reason: "artifact-corrupt", output: { out: 1 } });
    expect(JSON.parse(readFileSync(artifact, "utf8"))).toEqual({ out: 1 }); // rewritten intact
    expect(await open(runDir).step("s", { in: 2 }, fn)).toMatchObject({ reused: true });
    expect(fn.calls).toBe(4);
  });

  it("counts attempts per input since the last completion (what maxAttempts limits)", async () => {
    const store = open(fresh());
    await store.step("s", { v: 1 }, () => 1);
    await store.step("s", { v: 2 }, () => 2);
    await expect(store.step("s", { v: 3 }, () => Promise.reject(new Error("no")))).rejects.toThrow("no");
    expect(await store.record("s")).toMatchObject({ status: "failed", attempt: 1 });
    await expect(store.step("s", { v: 3 }, () => Promise.reject(new Error("no")))).rejects.toThrow("no");
    expect(await store.record("s")).toMatchObject({ status: "failed", attempt: 2 });
    await expect(store.step("s", { v: 4 }, () => Promise.reject(new Error("no")))).rejects.toThrow("no");
    expect(await store.record("s")).toMatchObject({ status: "failed", attempt: 1 });
  });

  it("reruns a failed step and a started one (its process died), counting attempts", async () => {
    const runDir = fresh();
    const store = open(runDir);
    const boom = () => {
      throw new Error("model timed out");
    };
    await expect(store.step("review:1", { a: 1 }, boom)).rejects.toThrow("model timed out");
    expect(await open(runDir).record("review:1")).toMatchObject({ status: "failed", attempt: 1, error: "Error: model timed out" });
    await expect(store.step("review:1", { a: 1 }, boom)).rejects.toThrow();
    let release!: () => void;
    const hanging = store.step("review:1", { a: 1 }, () => new Promise<string>((r) => (release = () => r("late"))));
    await new Promise((r) => setTimeout(r, 50));
    // Another store sees what a crash would leave behind: a started record.
    const other = open(runDir);
    expect(await other.record("review:1")).toMatchObject({ status: "started", attempt: 3 });
    const rerun = await other.step("review:1", { a: 1 }, () => "fresh");
    expect(rerun).toMatchObject({ reused: false, reason: "started", output: "fresh", record: { attempt: 4 } });
    release();
    expect((await hanging).record.attempt).toBe(3);
    expect(await open(runDir).step("review:1", { a: 1 }, () => "x")).toMatchObject({ reused: true });
  });

  it("refuses non-JSON inputs before running and records non-JSON outputs as failures", async () => {
    const runDir = fresh();
    const store = open(runDir);
    const fn = counted(1);
    await expect(store.step("s", { at: new Date() }, fn)).rejects.toMatchObject({ code: "UNSERIALIZABLE", details: { path: "$.at" } });
    expect(fn.calls).toBe(0);
    await expect(store.step("s", {}, () => new Map())).rejects.toMatchObject({ code: "UNSERIALIZABLE" });
    expect(await store.record("s")).toMatchObject({ status: "failed", attempt: 1 });
    await expect(store.step("../etc", {}, fn)).rejects.toMatchObject({ code: "INVALID_SLUG" });
    expect(() => createCheckpointStore({ runDir, now: undefined as unknown as () => Date })).toThrow(/option now/);
  });

  it("stores outputs content-addressed: equal outputs share one verified file, different ones never do", async () => {
    const runDir = fresh();
    const store = open(runDir);
    const a = await store.step("a", 1, () => ({ same: true }));
    const b = await store.step("b", 2, () => ({ same: true }));
    const c = await store.step("c", 3, () => ({ same: false }));
    expect(a.record.artifact).toBe(b.record.artifact);
    expect(c.record.artifact).not.toBe(a.record.artifact);
    expect(a.record.artifact).toBe(`artifacts/${fingerprint({ same: true }).slice("v1:sha256:".length)}.json`);
    expect(artifactFiles(runDir)).toHaveLength(2);
  });
});

describe("checkpoint store: the log", () => {
  it("tolerates a torn last line and never glues the next record onto it", async () => {
    const runDir = fresh();
    await open(runDir).step("one", 1, () => "first");
    appendFileSync(path.join(runDir, "checkpoints.ndjson"), '{"v":1,"kind":"step","stepId":"two","sta');
    const store = open(runDir);
    expect(await store.records()).toHaveLength(1);
    await store.step("two", 2, () => "second");
    const reloaded = open(runDir);
    expect((await reloaded.records()).map((r) => [r.stepId, r.status])).toEqual([["one", "completed"], ["two", "completed"]]);
    for (const line of logLines(runDir)) expect(() => JSON.parse(line)).not.toThrow();
  });

  it("reports a damaged line before the last as CORRUPT_FILE naming the line, and leaves the file alone", async () => {
    const runDir = fresh();
    await open(runDir).step("one", 1, () => 1);
    await open(runDir).step("two", 2, () => 2);
    const file = path.join(runDir, "checkpoints.ndjson");
    const damaged = readFileSync(file, "utf8").replace('"kind":"step"', '"kind":"stop"');
    writeFileSync(file, damaged);
    const err = await open(runDir).records().catch((e: unknown) => e);
    expect(isWorkflowError(err, "CORRUPT_FILE")).toBe(true);
    expect(err).toMatchObject({ details: { file, line: 1, offset: 0 } });
    expect(readFileSync(file, "utf8")).toBe(damaged);
  });

  it("a complete last line it cannot read (a newer record version) is CORRUPT_FILE, never cut as torn", async () => {
    const runDir = fresh();
    await open(runDir).step("one", 1, () => 1);
    const file = path.join(runDir, "checkpoints.ndjson");
    appendFileSync(file, '{"v":2,"kind":"step","stepId":"two","status":"completed"}\n');
    const before = readFileSync(file, "utf8");
    const err = await open(runDir).step("three", 3, () => 3).catch((e: unknown) => e);
    expect(isWorkflowError(err, "CORRUPT_FILE")).toBe(true);
    expect(err).toMatchObject({ details: { line: 3 } });
    expect(readFileSync(file, "utf8")).toBe(before);
  });

  it("compaction keeps only the latest record per key and drops unreferenced artifacts", async () => {
    const runDir = fresh();
    const store = open(runDir, { autoCompactAfter: 0 });
    for (let i = 0; i < 5; i++) await store.step("s", { i }, () => ({ out: i }));
    await store.step("t", 0, () => "t");
    await store.recordCommitIntent({ id: "c1", message: "feat: x", files: ["a.ts"] });
    await store.markCommitted("c1", { sha: "abc1234" });
    expect(logLines(runDir)).toHaveLength(5 * 2 + 2 + 2);
    expect(artifactFiles(runDir)).toHaveLength(6);
    const before = await store.records();
    expect(await store.compact()).toEqual({ recordsBefore: 14, recordsAfter: 3, artifactsRemoved: 4 });
    expect(logLines(runDir)).toHaveLength(3);
    expect(artifactFiles(runDir)).toHaveLength(2);
    const reloaded = open(runDir);
    expect(await reloaded.records()).toEqual(before);
    expect(await reloaded.commits()).toMatchObject([{ id: "c1", status: "committed", sha: "abc1234" }]);
    expect(await reloaded.step("s", { i: 4 }, () => ({ out: -1 }))).toMatchObject({ reused: true, output: { out: 4 } });
  });

  it("compacts by itself once superseded records pile up, so the log stays small", async () => {
    const runDir = fresh();
    const store = open(runDir, { autoCompactAfter: 20 });
    for (let i = 0; i < 100; i++) await store.step("loop", { i }, () => i);
    expect(logLines(runDir).length).toBeLessThanOrEqual(22);
    expect(await open(runDir).record("loop")).toMatchObject({ status: "completed", inputFingerprint: fingerprint({ i: 99 }) });
    expect(await open(runDir).step("loop", { i: 99 }, () => -1)).toMatchObject({ reused: true, output: 99 });
    expect(artifactFiles(runDir).length).toBeLessThanOrEqual(22);
  });

  it("loses no record appended while a compaction runs", async () => {
    const runDir = fresh();
    // A slow rename widens the window in which an append could land in the file a compaction is replacing.
    const slowRename: FsPort = { ...nodeFs, rename: async (a, b) => (await new Promise((r) => setTimeout(r, 15)), nodeFs.rename(a, b)) };
    const store = open(runDir, { autoCompactAfter: 0, fs: slowRename });
    await store.step("first", 0, () => 0);
    const intents = Array.from({ length: 10 }, (_, i) => store.recordCommitIntent({ id: `c${i}`, message: `m${i}`, files: [] }));
    await Promise.all([store.compact(), ...intents]);
    expect((await open(runDir).commits()).map((c) => c.id).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `c${i}`).sort());
    expect(await open(runDir).record("first")).toMatchObject({ status: "completed" });
  });

  it("records commit intents and marks them committed; an unknown id is NOT_FOUND", async () => {
    const runDir = fresh();
    const store = open(runDir);
    const intent = await store.recordCommitIntent({ id: "m1-commit", message: "feat: m1", files: ["src/a.ts", "src/b.ts"], stepId: "implement:M1" });
    expect(intent).toMatchObject({ status: "intended", files: ["src/a.ts", "src/b.ts"], stepId: "implement:M1" });
    expect(await open(runDir).commits()).toMatchObject([{ id: "m1-commit", status: "intended" }]);
    await store.markCommitted("m1-commit", { sha: "0123abcd" });
    expect(await open(runDir).commits()).toMatchObject([{ id: "m1-commit", status: "committed", sha: "0123abcd", message: "feat: m1" }]);
    await expect(store.markCommitted("nope")).rejects.toMatchObject({ code: "NOT_FOUND" });
    // Values the loader would refuse never reach the file.
    await expect(store.markCommitted("m1-commit", { sha: "not a sha" })).rejects.toMatchObject({ code: "INVALID_STATE", details: { field: "$.sha" } });
    await expect(store.recordCommitIntent({ id: "c2", message: 42 as unknown as string, files: [] })).rejects.toMatchObject({ code: "INVALID_STATE" });
    expect(await open(runDir).commits()).toMatchObject([{ id: "m1-commit", status: "committed", sha: "0123abcd" }]);
  });

  it("an append that fails is a typed WRITE_FAILED and leaves the earlier records readable", async () => {
    const runDir = fresh();
    await open(runDir).step("ok", 1, () => "kept");
    for (let n = 1; n <= 12; n++) {
      const broken = failingFs(n);
      const err = await open(runDir, { fs: broken.fs })
        .step(`s${n}`, n, () => n)
        .then(() => null, (e: unknown) => e);
      if (err !== null) expect(isWorkflowError(err), String(err)).toBe(true);
      expect(await open(runDir).step("ok", 1, () => "rerun")).toMatchObject({ reused: true, output: "kept" });
    }
  });
});
