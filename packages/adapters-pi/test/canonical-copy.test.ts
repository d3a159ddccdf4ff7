import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { encodeCanonical } from "../src/io/canonical-json.js";
import { encodeCanonicalCopy } from "../src/io/canonical-copy.js";
import { plainJson } from "./helpers/json-arbitraries.js";

/** Every object and array inside `v`. */
function containers(v: unknown, into = new Set<object>()): Set<object> {
  if (typeof v !== "object" || v === null) return into;
  into.add(v);
  for (const x of Object.values(v)) containers(x, into);
  return into;
}

/** Values, key order and -0 (which JSON.stringify writes as 0) in one text; toStrictEqual trips over an own `constructor` key. */
const exact = (v: unknown): string => JSON.stringify(v, (_k, x: unknown) => (Object.is(x, -0) ? "-0 (negative zero)" : x));

describe("canonical text and copy in one walk", () => {
  it("gives encodeCanonical's text and a copy equal to its parse (keys in the same order, no -0, nothing shared)", () => {
    fc.assert(
      fc.property(fc.oneof(plainJson, fc.constant({ z: -0, a: [-0, { "10": 1, "9": 2 }] })), (value) => {
        const { text, copy } = encodeCanonicalCopy(value);
        expect(text).toBe(encodeCanonical(value));
        const parsed: unknown = JSON.parse(text);
        expect(exact(copy)).toBe(exact(parsed));
        const mine = containers(value);
        for (const c of containers(copy)) expect(mine.has(c)).toBe(false);
      }),
      { numRuns: 5_000 },
    );
  });

  it("refuses what encodeCanonical refuses, with the same error", () => {
    fc.assert(
      fc.property(fc.anything({ withBigInt: true, withDate: true, withMap: true, withSet: true, withSparseArray: true, withTypedArray: true, withNullPrototype: true }), (value) => {
        let expected: unknown;
        try {
          encodeCanonical(value);
        } catch (e) {
          expected = e;
        }
        if (expected === undefined) expect(encodeCanonicalCopy(value).text).toBe(encodeCanonical(value));
        else expect(() => encodeCanonicalCopy(value)).toThrow((expected as Error).message);
      }),
      { numRuns: process.env.CI === "true" ? 2000 : 500 },
    );
  });

  it("makes text and copy from one read: a value that changes on every read still gives a copy equal to the text", () => {
    let reads = 0;
    const shifty = new Proxy({ a: 1, b: "x" } as Record<string, unknown>, { get: (t, k) => (typeof k === "string" && k in t ? `${String(k)}-${++reads}` : Reflect.get(t, k)) });
    const { text, copy } = encodeCanonicalCopy({ outer: shifty });
    expect(reads).toBeGreaterThan(0);
    expect(exact(copy)).toBe(exact(JSON.parse(text)));
  });

  it("never assigns a key through a polluted Object.prototype setter", () => {
    let set = 0;
    Object.defineProperty(Object.prototype, "polluted", { set: () => void ++set, get: () => undefined, configurable: true });
    try {
      const value = JSON.parse('{"b":{"polluted":2},"a":1}') as unknown;
      const { text, copy } = encodeCanonicalCopy(value);
      expect(text).toBe('{"a":1,"b":{"polluted":2}}');
      expect(Object.hasOwn((copy as { b: object }).b, "polluted")).toBe(true);
      expect(set).toBe(0);
    } finally {
      delete (Object.prototype as Record<string, unknown>).polluted;
    }
  });
});
