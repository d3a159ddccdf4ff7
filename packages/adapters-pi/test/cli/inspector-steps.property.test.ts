/**
 * The run page's step paging (pageOfSteps), as a property: from the newest page, following `before` cursors
 * visits every step once, in the order shown (by start, a tie in history order), and so does following `after`
 * cursors from the first page; a cursor still leads to the steps next to its page after the run recorded more
 * steps; a cursor that is not one is INVALID_OPTIONS naming the parameter. A run log's steps listed without a
 * record per step (listOfEntries) are shown in the same order, with the same facts, as their records.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { StepRecord } from "../../src/engine/records.js";
import { pageOfSteps, type StepWindow } from "../../src/cli/inspector-steps.js";
import { listOfEntries, listOfRecords } from "../../src/cli/history-view.js";
import { toStepRecord } from "../../src/store/log-checkpoints.js";
import { stepFacts } from "../../src/store/run-steps.js";
import type { StepEntry } from "../../src/store/run-log/run-index.js";
import { shownOrder as shownOrderOf } from "../../src/cli/run-summary.js";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");

/** Records in history order; starts drawn from few instants, so ties are common. */
function recordsOf(starts: readonly number[], from = 0): StepRecord[] {
  return starts.map((ms, i) => ({ v: 1, kind: "step", stepId: `s${from + i}`, status: "completed", attempt: 1, inputFingerprint: "v1:sha256:0", startedAt: new Date(T0 + ms).toISOString(), finishedAt: new Date(T0 + ms + 1).toISOString() }) as StepRecord);
}

const ids = (rs: readonly StepRecord[]) => rs.map((r) => r.stepId);
const shownOrder = (rs: readonly StepRecord[]) => shownOrderOf(listOfRecords(rs));

function walk(records: readonly StepRecord[], limit: number, direction: "before" | "after"): string[] {
  let window: StepWindow = direction === "before" ? { limit } : { limit, offset: 0 };
  const seen: string[][] = [];
  for (let guard = 0; guard <= records.length + 1; guard++) {
    const { shown, page } = pageOfSteps(listOfRecords(records), window);
    expect(shown.length).toBeLessThanOrEqual(limit);
    expect(page.total).toBe(records.length);
    seen.push(ids(shown));
    const next = direction === "before" ? page.before : page.after;
    if (next === null) return direction === "before" ? seen.reverse().flat() : seen.flat();
    window = direction === "before" ? { limit, before: next } : { limit, after: next };
  }
  throw new Error("the cursors never ended");
}

describe("pageOfSteps", () => {
  it("following the cursors either way visits every step once, in the order shown", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 120 }), fc.integer({ min: 1, max: 25 }), (starts, limit) => {
        const records = recordsOf(starts);
        const shown = shownOrder(records).map((i) => (records[i] as StepRecord).stepId);
        expect(walk(records, limit, "before")).toEqual(shown);
        expect(walk(records, limit, "after")).toEqual(shown);
      }),
    );
  });

  it("a page's cursors still lead to the steps next to it once the run has recorded more", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 20 }), { minLength: 1, maxLength: 80 }),
        fc.array(fc.integer({ min: 20, max: 40 }), { maxLength: 40 }),
        fc.integer({ min: 1, max: 15 }),
        fc.nat(),
        (starts, later, limit, pick) => {
          const before = recordsOf(starts);
          const order = shownOrder(before).map((i) => (before[i] as StepRecord).stepId);
          const offset = pick % before.length;
          const { shown, page } = pageOfSteps(listOfRecords(before), { offset, limit });
          // The steps recorded later start later: they come after every step shown here.
          const grown = [...before, ...recordsOf(later, before.length)];
          const grownOrder = shownOrder(grown).map((i) => (grown[i] as StepRecord).stepId);
          expect(grownOrder.slice(0, order.length)).toEqual(order);
          const from = order.indexOf((shown[0] as StepRecord).stepId);
          // A page has a cursor on each side with steps there (the cases below are checked whenever one is).
          expect(page.before === null).toBe(from === 0);
          expect(page.after === null).toBe(from + shown.length === order.length);
          if (page.before !== null) expect(ids(pageOfSteps(listOfRecords(grown), { limit, before: page.before }).shown)).toEqual(order.slice(Math.max(0, from - limit), from));
          if (page.after !== null) expect(ids(pageOfSteps(listOfRecords(grown), { limit, after: page.after }).shown)).toEqual(grownOrder.slice(from + shown.length, from + shown.length + limit));
        },
      ),
    );
  });

  it("the newest page by default; a cursor that is not one, or two of them, is INVALID_OPTIONS naming the parameter", () => {
    const records = recordsOf(Array.from({ length: 450 }, (_, i) => i));
    const first = pageOfSteps(listOfRecords(records), {});
    expect(ids(first.shown)).toEqual(ids(records.slice(250)));
    expect(first.page).toMatchObject({ offset: 250, limit: 200, total: 450, after: null });
    for (const bad of ["", "2026-01-01", "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z~x", "../x~1"]) {
      expect(() => pageOfSteps(listOfRecords(records), { before: bad })).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS", details: expect.objectContaining({ field: "stepsBefore", value: bad }) }));
      expect(() => pageOfSteps(listOfRecords(records), { after: bad })).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS", details: expect.objectContaining({ field: "stepsAfter" }) }));
    }
    expect(() => pageOfSteps(listOfRecords(records), { before: first.page.before as string, after: first.page.before as string })).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS" }));
    // Past either end: an empty page that leads back.
    const past = pageOfSteps(listOfRecords(records), { after: `${(records[449] as StepRecord).startedAt}~449` });
    expect(past.shown).toEqual([]);
    expect(ids(pageOfSteps(listOfRecords(records), { before: past.page.before as string }).shown)).toEqual(ids(records.slice(250)));
  });

  it("a run log's entries, a record made only when asked, give the order and the facts their records give", () => {
    const entry = fc.record(
      { status: fc.constantFrom("started", "completed", "failed"), startedAt: fc.option(fc.integer({ min: 0, max: 30 }), { nil: undefined }), at: fc.option(fc.integer({ min: 0, max: 30 }), { nil: undefined }), superseded: fc.boolean() },
      { requiredKeys: ["status", "superseded"] },
    );
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 60 }), (drawn) => {
        const entries: StepEntry[] = drawn.map((d, i) => ({
          key: `s${i}`,
          status: d.status,
          epoch: 1,
          inputFingerprint: "v1:sha256:0",
          attempt: 1,
          ...(d.at === undefined ? {} : { at: T0 + d.at }),
          ...(d.startedAt === undefined ? {} : { startedAt: T0 + d.startedAt }),
          ...(d.superseded ? { superseded: true } : {}),
        }));
        const records = entries.map(toStepRecord);
        const lazy = listOfEntries(entries);
        expect(lazy.facts()).toEqual(stepFacts(records));
        expect(shownOrderOf(lazy)).toEqual(shownOrderOf(listOfRecords(records)));
        expect(lazy.all()).toEqual(records);
      }),
    );
  });
});

describe("stepFacts", () => {
  it("steps that end in the same millisecond: the later in history order is the last completed (and the later start the one in flight)", () => {
    const at = new Date(T0).toISOString();
    const done = (stepId: string): StepRecord => ({ v: 1, kind: "step", stepId, status: "completed", attempt: 1, inputFingerprint: "v1:sha256:0", startedAt: at, finishedAt: at }) as StepRecord;
    const started = (stepId: string): StepRecord => ({ v: 1, kind: "step", stepId, status: "started", attempt: 1, inputFingerprint: "v1:sha256:0", startedAt: at }) as StepRecord;
    expect(stepFacts([done("fetch"), done("build")])).toEqual({ current: null, last: "build" });
    expect(stepFacts([done("fetch"), started("a"), started("b")])).toEqual({ current: "b", last: "fetch" });
  });
});
