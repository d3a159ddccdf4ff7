/**
 * The run page's step paging (pageOfSteps), as a property: from the newest page, following `before` cursors
 * visits every step once, in the order shown (by start, a tie in history order), and so does following `after`
 * cursors from the first page; a cursor still leads to the steps next to its page after the run recorded more
 * steps; a cursor that is not one is INVALID_OPTIONS naming the parameter.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { StepRecord } from "../../src/engine/records.js";
import { pageOfSteps, type StepWindow } from "../../src/cli/inspector-steps.js";
import { shownOrder } from "../../src/cli/run-summary.js";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");

/** Records in history order; starts drawn from few instants, so ties are common. */
function recordsOf(starts: readonly number[], from = 0): StepRecord[] {
  return starts.map((ms, i) => ({ v: 1, kind: "step", stepId: `s${from + i}`, status: "completed", attempt: 1, inputFingerprint: "v1:sha256:0", startedAt: new Date(T0 + ms).toISOString(), finishedAt: new Date(T0 + ms + 1).toISOString() }) as StepRecord);
}

const ids = (rs: readonly StepRecord[]) => rs.map((r) => r.stepId);

function walk(records: readonly StepRecord[], limit: number, direction: "before" | "after"): string[] {
  let window: StepWindow = direction === "before" ? { limit } : { limit, offset: 0 };
  const seen: string[][] = [];
  for (let guard = 0; guard <= records.length + 1; guard++) {
    const { shown, page } = pageOfSteps(records, window);
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
          const { shown, page } = pageOfSteps(before, { offset, limit });
          // The steps recorded later start later: they come after every step shown here.
          const grown = [...before, ...recordsOf(later, before.length)];
          const grownOrder = shownOrder(grown).map((i) => (grown[i] as StepRecord).stepId);
          expect(grownOrder.slice(0, order.length)).toEqual(order);
          const from = order.indexOf((shown[0] as StepRecord).stepId);
          if (page.before !== null) expect(ids(pageOfSteps(grown, { limit, before: page.before }).shown)).toEqual(order.slice(Math.max(0, from - limit), from));
          if (page.after !== null) expect(ids(pageOfSteps(grown, { limit, after: page.after }).shown)).toEqual(grownOrder.slice(from + shown.length, from + shown.length + limit));
        },
      ),
    );
  });

  it("the newest page by default; a cursor that is not one, or two of them, is INVALID_OPTIONS naming the parameter", () => {
    const records = recordsOf(Array.from({ length: 450 }, (_, i) => i));
    const first = pageOfSteps(records, {});
    expect(ids(first.shown)).toEqual(ids(records.slice(250)));
    expect(first.page).toMatchObject({ offset: 250, limit: 200, total: 450, after: null });
    for (const bad of ["", "2026-01-01", "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z~x", "../x~1"]) {
      expect(() => pageOfSteps(records, { before: bad })).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS", details: expect.objectContaining({ field: "stepsBefore", value: bad }) }));
      expect(() => pageOfSteps(records, { after: bad })).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS", details: expect.objectContaining({ field: "stepsAfter" }) }));
    }
    expect(() => pageOfSteps(records, { before: first.page.before as string, after: first.page.before as string })).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS" }));
    // Past either end: an empty page that leads back.
    const past = pageOfSteps(records, { after: `${(records[449] as StepRecord).startedAt}~449` });
    expect(past.shown).toEqual([]);
    expect(ids(pageOfSteps(records, { before: past.page.before as string }).shown)).toEqual(ids(records.slice(250)));
  });
});
