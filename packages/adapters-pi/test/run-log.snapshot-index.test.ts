import { describe, it, expect } from "vitest";
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { openRunLog } from "../src/store/run-log/run-log.js";
import { loadSnapshot } from "../src/store/run-log/read-chain.js";
import { layoutSnapshot, type SnapshotItem } from "../src/store/run-log/snapshot-layout.js";
import { type RunLogRecord } from "../src/store/run-log/format.js";
import { snapshotName } from "../src/store/run-log/file-names.js";
import type { StepEntry } from "../src/store/run-log/run-index.js";
import { ValueFiles } from "../src/store/run-log/values.js";

const temp = (): string => mkdtempSync(path.join(tmpdir(), "phasekit-snapidx-"));

/** A random step record of key `k` (the fields the index reports), with an inline output sometimes. */
const stepArb = (k: string): fc.Arbitrary<SnapshotItem> =>
  fc.record({ t: fc.constantFrom("start", "done", "fail"), e: fc.nat(5), a: fc.integer({ min: 1, max: 9 }), in: fc.string({ minLength: 1, maxLength: 8, unit: fc.constantFrom(..."0123456789abcdef") }), out: fc.option(fc.string({ maxLength: 20 }), { nil: undefined }) }).map(({ t, e, a, in: fp, out }) => {
    const base = { e, k, in: fp, a, at: 1_000 + a };
    if (t === "start") return { header: { t: "start", ...base } as RunLogRecord };
    if (t === "fail") return { header: { t: "fail", ...base, err: `boom ${k}`, st: 999 } as RunLogRecord };
    return { header: { t: "done", ...base, ofp: `fp-${k}`, st: 999 } as RunLogRecord, ...(out === undefined ? {} : { payload: JSON.stringify(out) }) };
  });

const keyArb = fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.string({ minLength: 1, maxLength: 4, unit: "grapheme" }), fc.constantFrom("a", "ab", "b", "a\"b", "a\\b", "é", "\u{1F600}", "\t", "s10", "s9"));

function expectSameStep(got: StepEntry | undefined, want: RunLogRecord, values: ValueFiles, payload: string | Buffer | undefined): void {
  const w = want as { t: string; e: number; in: string; a: number; err?: string };
  expect(got).toMatchObject({ status: w.t === "done" ? "completed" : w.t === "fail" ? "failed" : "started", epoch: w.e, inputFingerprint: w.in, attempt: w.a });
  if (w.t === "fail") expect(got?.error).toBe(w.err);
  if (payload !== undefined && got?.output !== undefined) expect(values.read(got.output)).toEqual({ ok: true, text: String(payload) });
  else expect(got?.output).toBeUndefined();
}

describe("run log: the sorted step index of a snapshot", () => {
  it("lookups, listings and an overlay on top agree with a plain Map fold (property)", async () => {
    const dir = temp();
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(keyArb, { maxLength: 40 }).chain((keys) => fc.tuple(fc.constant(keys), fc.tuple(...keys.map(stepArb)), fc.array(fc.tuple(keyArb, stepArb("x")), { maxLength: 15 }), fc.array(keyArb, { maxLength: 10 }))),
        async ([keys, steps, tail, probes]) => {
          const items: SnapshotItem[] = [{ header: { t: "event", e: 1, name: "before" }, payload: '"ev"' }, ...steps, { header: { t: "state", e: 1, n: 3, d: 0 }, payload: '{"s":1}' }];
          const name = snapshotName(1, ++n);
          writeFileSync(path.join(dir, name), Buffer.concat(layoutSnapshot(1, items)));
          const values = new ValueFiles();
          try {
            const index = await loadSnapshot(dir, name, values);
            const model = new Map<string, { header: RunLogRecord; payload?: string | Buffer }>();
            keys.forEach((k, i) => model.set(k, steps[i] as SnapshotItem));
            expect(index.records).toBe(items.length);
            expect(index.events.map((e) => e.name)).toEqual(["before"]);
            // The tail (segment lines after the snapshot) wins over it and keeps first-recorded order.
            for (const [k, item] of tail) {
              const header = { ...item.header, k } as RunLogRecord;
              model.set(k, { header });
              index.steps.set(k, { key: k, status: header.t === "done" ? "completed" : header.t === "fail" ? "failed" : "started", epoch: header.e, inputFingerprint: (header as { in: string }).in, attempt: (header as { a: number }).a, error: header.t === "fail" ? header.err : undefined });
            }
            expect(index.steps.size).toBe(model.size);
            for (const k of [...keys, ...probes, ...tail.map(([k]) => k)]) {
              const want = model.get(k);
              if (want === undefined) expect(index.steps.get(k)).toBeUndefined();
              else expectSameStep(index.steps.get(k), want.header, values, tail.some(([t]) => t === k) ? undefined : want.payload);
            }
            expect([...index.steps.values()].map((e) => e.key)).toEqual([...model.keys()]);
            expect([...index.steps.keys()]).toEqual([...model.keys()]);
          } finally {
            values.close();
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it("1,000 steps (many read groups): every key is found with its own line and output, absent ones are not", async () => {
    const dir = temp();
    const keys = Array.from({ length: 1000 }, (_, i) => `step/${(i * 7919) % 1000}`);
    const items: SnapshotItem[] = keys.map((k, i) => ({ header: { t: "done", e: 2, k, in: `in${i}`, a: 1, ofp: "f" }, payload: JSON.stringify({ i }) }));
    const name = snapshotName(2, 1);
    writeFileSync(path.join(dir, name), Buffer.concat(layoutSnapshot(2, items)));
    const values = new ValueFiles();
    const index = await loadSnapshot(dir, name, values);
    for (const i of [999, 0, 500, ...Array.from({ length: 1000 }, (_, j) => j)]) {
      const e = index.steps.get(keys[i] as string);
      expect(e?.inputFingerprint).toBe(`in${i}`);
      expect(values.read(e?.output as NonNullable<StepEntry["output"]>)).toEqual({ ok: true, text: JSON.stringify({ i }) });
    }
    expect(index.steps.get("step/1000")).toBeUndefined();
    expect(index.steps.get("step/")).toBeUndefined();
    expect([...index.steps.keys()]).toEqual(keys);
    values.close();
  });
});

/** A run of 30 steps compacted into one snapshot: its path, bytes and header. */
async function compactedRun(): Promise<{ runDir: string; snap: string; bytes: Buffer; head: { n: number; steps: number; keys: number; tab: number; idx: number } }> {
  const runDir = temp();
  const a = await openRunLog({ runDir });
  for (let i = 0; i < 30; i++) await a.step(`k${String(i).padStart(2, "0")}`, { i }, () => ({ i }));
  const report = await a.compact();
  await a.close();
  const snap = path.join(runDir, "runlog", report.snapshot);
  const bytes = readFileSync(snap);
  return { runDir, snap, bytes, head: JSON.parse(bytes.toString("utf8", 0, bytes.indexOf(10))) };
}

describe("run log: a damaged snapshot index is CORRUPT_FILE naming the file and offset", () => {
  it("opens a healthy one by reading the keys and table only; values and step lines on use", async () => {
    const { runDir, head } = await compactedRun();
    expect(head).toMatchObject({ n: 30 });
    const b = await openRunLog({ runDir });
    expect(await b.step("k17", { i: 17 }, () => null)).toMatchObject({ reused: true, output: { i: 17 } });
    expect(b.entries().map((e) => e.key)).toEqual(Array.from({ length: 30 }, (_, i) => `k${String(i).padStart(2, "0")}`));
    await b.close();
    expect(readdirSync(path.join(runDir, "runlog")).filter((f) => f.startsWith("snap-"))).toHaveLength(1);
  });

  it("an offset table entry out of order", async () => {
    const { runDir, snap, bytes, head } = await compactedRun();
    const at = head.tab + 5 * 8;
    bytes.writeUInt32LE(bytes.readUInt32LE(at) + 1_000_000, at);
    writeFileSync(snap, bytes);
    await expect(openRunLog({ runDir })).rejects.toMatchObject({ code: "CORRUPT_FILE", details: { file: snap, value: at }, message: expect.stringContaining(`${snap} holds an offset table entry`) });
  });

  it("a table that does not fit its header (cut short, header rewritten to match the size)", async () => {
    const { runDir, snap, bytes, head } = await compactedRun();
    const text = bytes.toString("latin1");
    const garbled = text.replace(`"tab":${head.tab}`, `"tab":${head.tab - 8}`);
    expect(garbled).not.toBe(text);
    writeFileSync(snap, Buffer.from(garbled, "latin1"));
    await expect(openRunLog({ runDir })).rejects.toMatchObject({ code: "CORRUPT_FILE", details: { file: snap, value: head.tab - 8 } });
  });

  it("a truncated snapshot (table and values cut)", async () => {
    const { runDir, snap, bytes, head } = await compactedRun();
    writeFileSync(snap, bytes.subarray(0, head.tab + 20));
    await expect(openRunLog({ runDir })).rejects.toMatchObject({ code: "CORRUPT_FILE", details: { file: snap, value: head.tab + 20 } });
  });

  it("keys out of order", async () => {
    const { runDir, snap, bytes, head } = await compactedRun();
    // k03 and k04 swap places in the key block: every offset still fits, the order does not.
    const k3 = bytes.indexOf("k03", head.keys);
    bytes.write("k04k03", k3, "latin1");
    writeFileSync(snap, bytes);
    await expect(openRunLog({ runDir })).rejects.toMatchObject({ code: "CORRUPT_FILE", details: { file: snap, value: head.tab + 4 * 8 }, message: expect.stringContaining("ascending") });
  });

  it("a step line whose key differs from its table entry opens, and using that step names the line", async () => {
    const { runDir, snap, bytes, head } = await compactedRun();
    const line = bytes.readUInt32LE(head.tab + 7 * 8);
    const k = bytes.indexOf('"k":"k07"', line);
    bytes.write('"k":"k0X"', k, "latin1");
    writeFileSync(snap, bytes);
    const b = await openRunLog({ runDir });
    expect(await b.step("k08", { i: 8 }, () => null)).toMatchObject({ reused: true });
    await expect(b.step("k07", { i: 7 }, () => null)).rejects.toMatchObject({ code: "CORRUPT_FILE", details: { file: snap, value: line } });
    await b.close();
  });

  it("an order table that repeats a position: listing is CORRUPT_FILE naming the entry", async () => {
    const { runDir, snap, bytes, head } = await compactedRun();
    const at = head.tab + (head.n + 1) * 8 + 2 * 4;
    bytes.writeUInt32LE(0, at);
    writeFileSync(snap, bytes);
    const b = await openRunLog({ runDir });
    expect(() => b.entries()).toThrow(expect.objectContaining({ code: "CORRUPT_FILE", details: expect.objectContaining({ file: snap, value: at }) }));
    await b.close();
  });
});

describe("run log: a holder keeps reading the snapshot it opened", () => {
  it("after a newer holder's compaction deleted it, the displaced holder still lists its steps and ends LOCK_LOST", async () => {
    const runDir = temp();
    const a = await openRunLog({ runDir });
    for (let i = 0; i < 5; i++) await a.step(`a${i}`, { i }, () => ({ i }));
    const mine = (await a.compact()).snapshot;
    const b = await openRunLog({ runDir });
    await b.compact();
    expect(readdirSync(path.join(runDir, "runlog"))).not.toContain(mine);
    expect(a.entries().map((e) => e.key)).toEqual(["a0", "a1", "a2", "a3", "a4"]);
    await expect(a.step("late", {}, () => 1)).rejects.toMatchObject({ code: "LOCK_LOST" });
    await a.close();
    await b.close();
  });
});
