/** isoStamp is byte for byte `toISOString`, for any date, in any order (the minute it keeps changes under it). */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isoStamp } from "../src/store/iso-stamp.js";

const same = (d: Date): void => {
  let want: string;
  try {
    want = d.toISOString();
  } catch (error) {
    expect(() => isoStamp(d)).toThrow(error as Error);
    return;
  }
  expect(isoStamp(d)).toBe(want);
};

describe("isoStamp", () => {
  it("equals toISOString for any date, valid or not, one after another", () => {
    fc.assert(fc.property(fc.array(fc.date({ noInvalidDate: false }), { minLength: 1, maxLength: 20 }), (dates) => dates.forEach(same)), { numRuns: 2_000 });
  });

  it("equals toISOString around its edges: the epoch, minute and second turns, year 9999 to 10000", () => {
    const near = (t: number) => fc.integer({ min: t - 120_000, max: t + 120_000 }).map((x) => new Date(x));
    const edges = [0, 1_700_000_000_000, 253_402_300_800_000];
    fc.assert(fc.property(fc.array(fc.oneof(...edges.map(near)), { minLength: 1, maxLength: 50 }), (dates) => dates.forEach(same)), { numRuns: 2_000 });
    for (const t of [-1, 0, 999, 1_000, 59_999, 60_000, 253_402_300_799_999, 253_402_300_800_000, Number.NaN]) same(new Date(t));
  });
});
