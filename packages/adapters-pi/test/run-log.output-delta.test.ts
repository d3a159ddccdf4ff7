import { describe, it, expect } from "vitest";
import { mkdtempSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { isWorkflowError } from "@phasekit/core";
import { openRunLog } from "../src/store/run-log/run-log.js";
import { readRunLog } from "../src/store/run-log/reader.js";
import { MAX_OUTPUT_CHAIN } from "../src/store/run-log/output-delta.js";
import { applyDelta, diffJson } from "../src/store/run-log/state-delta.js";
import { encodeCanonical } from "../src/io/canonical-json.js";
import type { JsonValue } from "../src/io/plain-json.js";

const temp = (): string => mkdtempSync(path.join(tmpdir(), "phasekit-outdelta-"));
const seg = (runDir: string, epoch: number): string => path.join(runDir, "runlog", `${String(epoch).padStart(10, "0")}.seg`);
const canon = (v: unknown): string => encodeCanonical(v === undefined ? null : v);
const rerun = (): never => {
  throw new Error("the step ran instead of being reused");
};
const pad = "p".repeat(400);

/** Lines of a segment as [header, payload] text. */
function lines(file: string): Array<[string, string | undefined]> {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => {
      const tab = l.indexOf("\t");
      return tab === -1 ? [l, undefined] : [l.slice(0, tab), l.slice(tab + 1)];
    });
}

// A sequence of outputs that mostly edit the one before (so deltas are written), sometimes something new.
const edit = fc.oneof(
  fc.record({ kind: fc.constant("set" as const), key: fc.oneof(fc.constantFrom("a", "b", "10", "9", "__proto__", "ü"), fc.string({ maxLength: 3 })), value: fc.jsonValue() }),
  fc.record({ kind: fc.constant("del" as const), key: fc.constantFrom("a", "b", "10", "9", "__proto__") }),
  fc.record({ kind: fc.constant("new" as const), value: fc.jsonValue() }),
);

function outputsOf(edits: ReadonlyArray<typeof edit extends fc.Arbitrary<infer E> ? E : never>): JsonValue[] {
  let current: JsonValue = { pad, n: 0 };
  const out: JsonValue[] = [];
  for (const e of edits) {
    if (e.kind === "new") current = e.value as JsonValue;
    else {
      const next: Record<string, JsonValue> = typeof current === "object" && current !== null && !Array.isArray(current) ? { ...current } : { pad };
      // defineProperty: a key named __proto__ is data, as JSON.parse makes it.
      if (e.kind === "set") Object.defineProperty(next, e.key, { value: e.value, enumerable: true, writable: true, configurable: true });
      else delete next[e.key];
      current = next;
    }
    out.push(current);
  }
  return out;
}

describe("step outputs stored as deltas", () => {
  it("any sequence of JSON outputs reads back exactly: reused in order and out of order, after compaction, after close, through a reader (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(edit, { minLength: 1, maxLength: 40 }), fc.constantFrom("reopen", "compact", "close-fold"), async (edits, how) => {
        const outputs = outputsOf(edits);
        const runDir = temp();
        const a = await openRunLog({ runDir });
        for (let i = 0; i < outputs.length; i++) await a.step(`s${i}`, { i }, () => outputs[i] as JsonValue);
        if (how === "compact") await a.compact();
        await a.close();
        if (how === "close-fold") {
          // A fresh holder that claims over four segments folds when it closes (fold.ts): a snapshot holds them.
          for (let k = 0; k < 4; k++) {
            const x = await openRunLog({ runDir });
            await x.step(`x${k}`, { k }, () => k);
            await x.close();
          }
        }
        const view = await readRunLog(runDir);
        for (let i = 0; i < outputs.length; i++) expect(await view?.outputText(view.entry(`s${i}`)!)).toBe(canon(outputs[i]));
        view?.close();
        const b = await openRunLog({ runDir });
        const order = outputs.map((_, i) => i);
        // In order (a resume: deltas applied to the output checked last) and then out of order; each value handed
        // out equals a parse of the output's canonical JSON, its keys in the same order.
        for (const i of [...order, ...order.reverse()]) expect(JSON.stringify((await b.step(`s${i}`, { i }, rerun)).output)).toBe(JSON.stringify(JSON.parse(canon(outputs[i]))));
        await b.close();
      }),
      { numRuns: process.env.CI === "true" ? 200 : 40 },
    );
  }, 60_000);

  it("a crash cutting the segment anywhere leaves every step whose line is whole reusable with its exact output, and the rest rerun (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(edit, { minLength: 2, maxLength: 20 }), fc.double({ min: 0, max: 1, noNaN: true }), async (edits, where) => {
        const outputs = outputsOf(edits);
        const runDir = temp();
        const a = await openRunLog({ runDir });
        for (let i = 0; i < outputs.length; i++) await a.step(`s${i}`, { i }, () => outputs[i] as JsonValue);
        await a.close();
        const file = seg(runDir, 1);
        const bytes = readFileSync(file);
        const head = bytes.indexOf(0x0a) + 1;
        const cut = head + Math.floor(where * (bytes.length - head));
        truncateSync(file, cut);
        // The done lines that lie whole before the cut are the acknowledged ones.
        const whole = new Set<string>();
        for (const [h] of lines(file).slice(0, bytes.subarray(0, cut).toString("utf8").split("\n").length - 1)) {
          const r = JSON.parse(h) as { t: string; k?: string };
          if (r.t === "done") whole.add(r.k as string);
        }
        const b = await openRunLog({ runDir });
        for (let i = 0; i < outputs.length; i++) {
          const r = await b.step(`s${i}`, { i }, () => outputs[i] as JsonValue);
          expect(r.reused).toBe(whole.has(`s${i}`));
          expect(canon(r.output)).toBe(canon(outputs[i]));
        }
        await b.compact();
        await b.close();
        const c = await openRunLog({ runDir });
        for (let i = 0; i < outputs.length; i++) expect(canon((await c.step(`s${i}`, { i }, rerun)).output)).toBe(canon(outputs[i]));
        await c.close();
      }),
      { numRuns: process.env.CI === "true" ? 200 : 40 },
    );
  }, 60_000);

  it("1,000 outputs of 10 KB with ~200 B changed each take under 1 MiB, with a full value at least every MAX_OUTPUT_CHAIN", async () => {
    const runDir = temp();
    const a = await openRunLog({ runDir });
    const state: Record<string, string> = {};
    for (let k = 0; k < 90; k++) state[`k${k}`] = `${k}`.padEnd(100, "x");
    for (let i = 0; i < 1000; i++) {
      state[`k${(i * 2) % 90}`] = `${i}-a`.padEnd(100, "c");
      state[`k${(i * 2 + 1) % 90}`] = `${i}-b`.padEnd(100, "c");
      await a.step(`s${i}`, { i }, () => ({ ...state }));
    }
    await a.close();
    const size = readdirSync(path.join(runDir, "runlog")).reduce((n, f) => n + statSync(path.join(runDir, "runlog", f)).size, 0);
    expect(size).toBeLessThan(1024 * 1024);
    let run = 0;
    let most = 0;
    for (const [h] of lines(seg(runDir, 1))) {
      const r = JSON.parse(h) as { t: string; d?: number };
      if (r.t !== "done") continue;
      run = r.d === 1 ? run + 1 : 0;
      most = Math.max(most, run);
    }
    expect(most).toBe(MAX_OUTPUT_CHAIN);
    // A compaction re-chains them in its snapshot: still under 1 MiB, and read back exactly in any order.
    const b = await openRunLog({ runDir });
    const { snapshot } = await b.compact();
    const snap = readFileSync(path.join(runDir, "runlog", snapshot), "utf8");
    expect(snap.length).toBeLessThan(1024 * 1024);
    expect(snap.split('"d":1').length - 1).toBeGreaterThan(900);
    await b.close();
    const c = await openRunLog({ runDir });
    const first = (await c.step("s999", { i: 999 }, rerun)).output as Record<string, string>;
    expect(first.k18).toBe("999-a".padEnd(100, "c")); // (999 * 2) % 90 = 18
    expect(Object.keys(first)).toHaveLength(90);
    await c.close();
  }, 30_000);

  it("parallel steps (one write batch, several deltas on one base, laid out when written) read back exactly", async () => {
    const runDir = temp();
    const a = await openRunLog({ runDir });
    const outputOf = (i: number): JsonValue => ({ pad, i, even: i % 2 === 0 });
    await a.step("first", {}, () => outputOf(-1));
    await Promise.all(Array.from({ length: 20 }, (_, i) => a.step(`p${i}`, { i }, async () => outputOf(i))));
    await Promise.all(Array.from({ length: 20 }, (_, i) => a.step(`q${i}`, { i }, () => outputOf(100 + i))));
    await a.close();
    const deltas = lines(seg(runDir, 1)).filter(([h]) => (JSON.parse(h) as { d?: number }).d === 1).length;
    expect(deltas).toBeGreaterThan(30);
    const b = await openRunLog({ runDir });
    for (let i = 19; i >= 0; i--) {
      expect((await b.step(`q${i}`, { i }, rerun)).output).toEqual(outputOf(100 + i));
      expect((await b.step(`p${i}`, { i }, rerun)).output).toEqual(outputOf(i));
    }
    await b.close();
  });

  it("applying a chain of deltas with one set of copies equals applying them one by one, and never changes the base (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue(), { minLength: 2, maxLength: 6 }), (values) => {
        const vs = values as JsonValue[];
        const before = canon(vs[0]);
        const fresh = new Set<object>();
        let shared = vs[0] as JsonValue;
        for (let i = 1; i < vs.length; i++) shared = applyDelta(shared, diffJson(vs[i - 1] as JsonValue, vs[i] as JsonValue), fresh);
        expect(canon(shared)).toBe(canon(vs[vs.length - 1]));
        expect(canon(vs[0])).toBe(before);
      }),
      { numRuns: 300 },
    );
  });
});

describe("hostile output deltas", () => {
  /** A run with a full output `a` and a delta `b` on it; returns the segment and b's line parts. */
  async function twoSteps(): Promise<{ runDir: string; file: string; bHeader: string; bPayload: string }> {
    const runDir = temp();
    const a = await openRunLog({ runDir });
    await a.step("a", {}, () => ({ pad, n: 1 }));
    await a.step("b", {}, () => ({ pad, n: 2 }));
    await a.close();
    const file = seg(runDir, 1);
    const last = lines(file).at(-1) as [string, string];
    expect(JSON.parse(last[0])).toMatchObject({ t: "done", k: "b", d: 1 });
    return { runDir, file, bHeader: last[0], bPayload: last[1] };
  }

  function replaceLast(file: string, header: string, payload: string): void {
    const text = readFileSync(file, "utf8");
    const cut = text.lastIndexOf("\n", text.length - 2) + 1;
    writeFileSync(file, `${text.slice(0, cut)}${header}\t${payload}\n`);
  }

  const cases: Array<[string, (p: string) => string]> = [
    ["a base past the start of the file", (p) => p.replace(/^\[\d+,/, "[99999999,")],
    ["a base that lies inside a header (no JSON there)", (p) => p.replace(/^\[\d+,\d+,/, (m) => `[${Number(m.slice(1).split(",")[0]) - 3},5,`)],
    ["an envelope of the wrong shape", () => '{"x":1}'],
    ["a base longer than the distance to it", (p) => p.replace(/^\[(\d+),\d+,/, (_, back: string) => `[${back},${Number(back) + 1},`)],
    ["ops that do not fit the base", (p) => p.replace(/,\[\[.*\]\]\]$/, ',[[["pad","deep"],1]]]')],
    ["ops that are no list of operations", (p) => p.replace(/,\[\[.*\]\]\]$/, ',"nope"]')],
  ];
  for (const [what, change] of cases) {
    it(`${what}: reusing the step and reading its output are CORRUPT_FILE naming the segment and the byte, never a value`, async () => {
      const { runDir, file, bHeader, bPayload } = await twoSteps();
      const changed = change(bPayload);
      expect(changed).not.toBe(bPayload);
      replaceLast(file, bHeader, changed);
      const b = await openRunLog({ runDir });
      expect(await b.step("a", {}, rerun)).toMatchObject({ reused: true, output: { n: 1 } });
      const err = await b.step("b", {}, () => ({ wrong: true })).then(() => null, (e: unknown) => e);
      expect(isWorkflowError(err, "CORRUPT_FILE")).toBe(true);
      expect((err as { details?: { file?: string } }).details?.file).toBe(file);
      expect(String((err as Error).message)).toMatch(/at byte \d+/);
      await b.close().catch(() => undefined);
      const view = await readRunLog(runDir);
      const viaReader = await view?.outputText(view.entry("b")!).then(() => null, (e: unknown) => e);
      expect(isWorkflowError(viaReader, "CORRUPT_FILE")).toBe(true);
      view?.close();
    });
  }

  it("a base whose bytes were changed but still parse: the output does not verify, so the step reruns (never a wrong value)", async () => {
    const { runDir, file } = await twoSteps();
    const text = readFileSync(file, "utf8");
    // a's pad (b's delta does not touch it) changed in place, same length: b's chain now gives another value.
    writeFileSync(file, text.replace('"pad":"pppp', '"pad":"qqqq'));
    const b = await openRunLog({ runDir });
    let ran = 0;
    const rb = await b.step("b", {}, () => (ran++, { pad, n: 2 }));
    expect(rb).toMatchObject({ reused: false, reason: "artifact-corrupt", output: { pad, n: 2 } });
    expect(ran).toBe(1);
    await b.close();
  });
});

describe("the delta rule (state-delta.ts smallDelta)", () => {
  it("gives up early exactly when the delta would not be taken: the same answer as encoding the whole diff (property)", async () => {
    const { smallDelta } = await import("../src/store/run-log/state-delta.js");
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), fc.integer({ min: 0, max: 400 }), (a, b, full) => {
        const ops = encodeCanonical(diffJson(a as JsonValue, b as JsonValue));
        expect(smallDelta(a as JsonValue, b as JsonValue, full)).toBe(ops.length * 2 < full ? ops : undefined);
      }),
      { numRuns: 1000 },
    );
  });
});
