/** The rerun rule (reuse-decision.ts) as properties: supersession wins over every other fact of a record. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decideStep, isSuperseded, keysFrom, RERUN_EVENT, rerunMarksOf, type PriorStep } from "../src/engine/reuse-decision.js";
import { isSpent, keysToSpend, RERUN_SPENT_EVENT, spentMarksOf } from "../src/engine/rerun-spent.js";
import { readRunLog } from "../src/store/run-log/reader.js";
import { openRunLog } from "../src/store/run-log/run-log.js";

const fp = fc.constantFrom("v1:a", "v1:b");
const prior: fc.Arbitrary<PriorStep> = fc.record({
  status: fc.constantFrom("started" as const, "completed" as const, "failed" as const),
  inputFingerprint: fp,
  attempt: fc.integer({ min: 1, max: 50 }),
  outputFingerprint: fc.option(fp, { nil: undefined }),
});

describe("rerun marks", () => {
  it("a superseded record always reruns as attempt 1, whatever its status, input or output", () => {
    fc.assert(
      fc.property(prior, fp, (p, given) => {
        expect(decideStep({ ...p, superseded: true }, given)).toEqual({ verify: false, reason: "superseded", attempt: 1 });
        // Without the flag the decision is the one it always was.
        expect(decideStep({ ...p, superseded: false }, given)).toEqual(decideStep(p, given));
      }),
    );
  });

  it("a mark supersedes only records of earlier leases, and only the keys it names", () => {
    const key = fc.constantFrom("a", "b", "c", "d");
    const mark = fc.record({ epoch: fc.integer({ min: 1, max: 9 }), from: key, keys: fc.uniqueArray(key) });
    fc.assert(
      fc.property(key, fc.integer({ min: 1, max: 9 }), fc.array(mark, { maxLength: 4 }), (k, epoch, marks) => {
        const expected = marks.some((m) => m.epoch > epoch && m.keys.includes(k));
        expect(isSuperseded(k, epoch, marks)).toBe(expected);
      }),
    );
  });

  it("keysFrom is the suffix of the history order that starts at the step, or null", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 3 }), { maxLength: 8 }), fc.string({ minLength: 1, maxLength: 3 }), (order, from) => {
        const r = keysFrom(order, from);
        if (!order.includes(from)) {
          expect(r).toBeNull();
          return;
        }
        expect(r?.[0]).toBe(from);
        expect([...order.slice(0, order.indexOf(from)), ...(r ?? [])]).toEqual(order);
      }),
    );
  });

  it("marks are read from event data; hostile data is CORRUPT_FILE naming its place, never skipped", () => {
    const place = { file: "runlog/3.seg", place: { offset: 40 } };
    fc.assert(
      fc.property(fc.anything(), (data) => {
        const read = (() => {
          try {
            return rerunMarksOf([{ epoch: 3, data, ...place }]);
          } catch (error) {
            return error;
          }
        })();
        if (Array.isArray(read)) {
          // Read as written: one mark, its from and every key a string.
          expect(read).toEqual([{ epoch: 3, from: (data as { from: string }).from, keys: (data as { keys: string[] }).keys }]);
          expect(read[0].keys.every((k: unknown) => typeof k === "string")).toBe(true);
        } else expect(read).toMatchObject({ code: "CORRUPT_FILE", details: { file: "runlog/3.seg", offset: 40 } });
      }),
    );
    expect(() => rerunMarksOf([{ epoch: 2, data: { from: "b", keys: ["b", 7, "c"] }, ...place }])).toThrow(/runlog\/3\.seg holds a rerun mark at byte 40 that is not valid: keys\[1\]/);
  });
});

describe("spent rerun marks", () => {
  const key = fc.constantFrom("a", "b", "c");
  const named = fc.record({ epoch: fc.integer({ min: 1, max: 9 }), keys: fc.uniqueArray(key) });

  it("a mark is spent only by a later spend naming its step; a later mark makes it pending again", () => {
    fc.assert(
      fc.property(key, fc.array(named.map((m) => ({ ...m, from: "a" })), { maxLength: 4 }), fc.array(named, { maxLength: 4 }), (k, marks, spends) => {
        const latest = Math.max(-Infinity, ...marks.filter((m) => m.keys.includes(k)).map((m) => m.epoch));
        expect(isSpent(k, marks, spends)).toBe(spends.some((s) => s.epoch > latest && s.keys.includes(k)));
      }),
    );
  });

  it("a run's end spends exactly the superseded records not spent yet; hostile spend data is CORRUPT_FILE", () => {
    const rec = fc.record({ stepId: key, superseded: fc.option(fc.boolean(), { nil: undefined }), rerunSpent: fc.option(fc.boolean(), { nil: undefined }) });
    fc.assert(
      fc.property(fc.array(rec, { maxLength: 6 }), (records) => {
        expect(keysToSpend(records)).toEqual(records.filter((r) => r.superseded === true && r.rerunSpent !== true).map((r) => r.stepId));
      }),
    );
    fc.assert(
      fc.property(fc.anything(), (data) => {
        let spends: ReturnType<typeof spentMarksOf> = [];
        try {
          spends = spentMarksOf([{ epoch: 3, data, file: "runlog/3.seg", place: { entry: 9 } }]);
        } catch (error) {
          expect(error).toMatchObject({ code: "CORRUPT_FILE", details: { file: "runlog/3.seg", entry: 9 } });
          return;
        }
        expect(spends).toEqual([{ epoch: 3, keys: (data as { keys: string[] }).keys }]);
      }),
    );
  });
});

describe("rerun marks in the run log", () => {
  it("a spend archived by a compaction still spends (and the mark still supersedes)", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "pk-spent-"));
    try {
      const first = await openRunLog({ runDir: dir, autoCompactAfter: 0 });
      for (const k of ["a", "b", "c"]) await first.step(k, { k }, () => k);
      await first.close();
      const marker = await openRunLog({ runDir: dir, autoCompactAfter: 0 });
      await marker.event(RERUN_EVENT, { from: "b", keys: ["b", "c"] });
      await marker.close();
      const ender = await openRunLog({ runDir: dir, autoCompactAfter: 0 });
      await ender.step("b", { k: "b" }, () => "b2");
      await ender.event(RERUN_SPENT_EVENT, { keys: ["c"], at: "2026-01-01T00:00:00.000Z" });
      expect([ender.entry("b")?.superseded, ender.entry("c")?.superseded, ender.entry("c")?.rerunSpent]).toEqual([undefined, true, true]);
      for (let n = 1; n <= 80; n++) await ender.putState({ n, pad: "x".repeat(2000) });
      await ender.compact();
      await ender.close();
      const view = await readRunLog(dir);
      expect([view?.entry("b")?.superseded, view?.entry("c")?.superseded, view?.entry("c")?.rerunSpent]).toEqual([undefined, true, true]);
      view?.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a mark archived by a compaction (states written after it) still supersedes", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "pk-marks-"));
    try {
      const first = await openRunLog({ runDir: dir, autoCompactAfter: 0 });
      for (const k of ["a", "b", "c"]) await first.step(k, { k }, () => k);
      await first.putState({ n: 0, pad: "x".repeat(2000) });
      await first.close();
      const marker = await openRunLog({ runDir: dir, autoCompactAfter: 0 });
      await marker.event(RERUN_EVENT, { from: "b", keys: ["b", "c"] });
      await marker.close();
      // A holder that writes states (a full one among them) and compacts: the mark goes into the archive.
      const writer = await openRunLog({ runDir: dir, autoCompactAfter: 0 });
      for (let n = 1; n <= 80; n++) await writer.putState({ n, pad: "x".repeat(2000) });
      await writer.compact();
      await writer.close();
      const view = await readRunLog(dir);
      expect([view?.entry("a")?.superseded, view?.entry("b")?.superseded, view?.entry("c")?.superseded]).toEqual([undefined, true, true]);
      view?.close();
      const resumed = await openRunLog({ runDir: dir, autoCompactAfter: 0 });
      const ran: string[] = [];
      for (const k of ["a", "b", "c"]) {
        const r = await resumed.step(k, { k }, () => (ran.push(k), k));
        if (!r.reused) expect(r.reason).toBe("superseded");
      }
      expect(ran).toEqual(["b", "c"]);
      await resumed.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
