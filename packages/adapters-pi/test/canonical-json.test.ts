import { describe, it, expect } from "vitest";
import fc from "fast-check";
import stableStringify from "fast-json-stable-stringify";
import { isWorkflowError } from "@phasekit/core";
import { canonicalJson, encodeCanonical } from "../src/io/canonical-json.js";
import { assertPlainJson, type JsonValue } from "../src/io/plain-json.js";
import { plainJson as json } from "./helpers/json-arbitraries.js";


// The indented form the store wrote before the one-pass encoder (metadata files must not change bytes).
function reference(value: JsonValue, pad: string, indent = ""): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  const inner = indent + pad;
  if (Array.isArray(value)) return value.length === 0 ? "[]" : `[\n${inner}${value.map((v) => reference(v, pad, inner)).join(`,\n${inner}`)}\n${indent}]`;
  const keys = Object.keys(value).sort();
  if (keys.length === 0) return "{}";
  return `{\n${inner}${keys.map((k) => `${JSON.stringify(k)}: ${reference(value[k] as JsonValue, pad, inner)}`).join(`,\n${inner}`)}\n${indent}}`;
}

describe("one-pass canonical encoder", () => {
  it("gives byte-identical output to fast-json-stable-stringify on 10,000 random plain values", () => {
    fc.assert(
      fc.property(json, (value) => {
        expect(encodeCanonical(value)).toBe(stableStringify(value));
        expect(canonicalJson(value, 2)).toBe(reference(value as JsonValue, "  "));
      }),
      { numRuns: 10_000 },
    );
  });

  // Without keys that live on Object.prototype, unsorted values take the replacer-array path (no copy).
  const listPathKey = fc.oneof(
    fc.string({ unit: "grapheme-composite", maxLength: 6 }),
    fc.constantFrom("0", "1", "10", "9", "01", "-1", "4294967295", "4294967294", "1e3", "", "\u{1F600}", "\uFFFF", "a"),
    fc.nat().map(String),
  ).filter((k) => !(k in Object.prototype));
  const listPathJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      fc.constant(null),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.string({ unit: "binary", maxLength: 12 }),
      fc.array(tie("value"), { maxLength: 6 }),
      fc.dictionary(listPathKey, tie("value"), { maxKeys: 6 }),
      fc.constant(Object.assign(Object.create(null) as object, { z: 1, y: [2] })),
    ),
  })).value;

  it("gives fast-json-stable-stringify's bytes on 10,000 random values without prototype keys (key-list path)", () => {
    fc.assert(
      fc.property(listPathJson, (value) => {
        expect(encodeCanonical(value)).toBe(stableStringify(value));
        expect(canonicalJson(value, 3)).toBe(reference(value as JsonValue, "   "));
      }),
      { numRuns: 10_000 },
    );
  });

  it("never lets a key inherited from a polluted Object.prototype into the text", () => {
    const value = { b: { c: 1 }, a: { polluted: 2, y: 1 }, list: [{ z: 1, x: 2 }] };
    // Not enumerable, so the test runner's own for-in loops do not trip over it; a read through the prototype still sees it.
    Object.defineProperty(Object.prototype, "polluted", { value: "leak", writable: true, configurable: true });
    try {
      expect(encodeCanonical(value)).toBe('{"a":{"polluted":2,"y":1},"b":{"c":1},"list":[{"x":2,"z":1}]}');
      expect(encodeCanonical({ polluted: 1, b: { a: 1 } })).toBe('{"b":{"a":1},"polluted":1}');
    } finally {
      delete (Object.prototype as Record<string, unknown>).polluted;
    }
  });

  it("encodes values with many distinct keys (where a key list would cost objects × keys) byte for byte", () => {
    const byId: Record<string, unknown> = {};
    for (let i = 2000; i > 0; i--) byId[`id-${i}`] = { v: i, k: [i, { b: 1, a: 2 }] };
    const value = { z: byId, a: Array.from({ length: 500 }, (_, i) => ({ [`only-${i}`]: i, b: 0 })) };
    expect(encodeCanonical(value)).toBe(stableStringify(value));
  });

  it("keeps the canonical order for integer-like and __proto__ keys (where the engine reorders)", () => {
    const o = JSON.parse('{"b":1,"10":2,"9":3,"__proto__":{"z":1,"a":2},"a":[{"2":0,"1":0}]}') as unknown;
    expect(encodeCanonical(o)).toBe('{"10":2,"9":3,"__proto__":{"a":2,"z":1},"a":[{"1":0,"2":0}],"b":1}');
    expect(encodeCanonical(o)).toBe(stableStringify(o));
  });

  it("returns the same text for an already-sorted value and leaves the input untouched", () => {
    const value = { a: { c: 1, b: [3, { y: 1, x: 2 }] } };
    const before = JSON.stringify(value);
    expect(encodeCanonical(value)).toBe('{"a":{"b":[3,{"x":2,"y":1}],"c":1}}');
    expect(JSON.stringify(value)).toBe(before);
  });

  it("accepts exactly what assertPlainJson accepts, and refuses with the same error", () => {
    const anything = fc.anything({
      withBigInt: true,
      withBoxedValues: true,
      withDate: true,
      withMap: true,
      withSet: true,
      withNullPrototype: true,
      withObjectString: true,
      withSparseArray: true,
      withTypedArray: true,
      withUnicodeString: true,
    });
    fc.assert(
      fc.property(anything, (value) => {
        let expected: unknown;
        try {
          assertPlainJson(value);
        } catch (e) {
          expected = e;
        }
        let actual: unknown;
        try {
          encodeCanonical(value);
        } catch (e) {
          actual = e;
        }
        if (expected === undefined) expect(actual).toBeUndefined();
        else {
          expect(isWorkflowError(actual, "UNSERIALIZABLE")).toBe(true);
          expect((actual as Error).message).toBe((expected as Error).message);
        }
      }),
      { numRuns: process.env.CI === "true" ? 2000 : 500 },
    );
  });

  it("never runs a getter and refuses accessors, holes and hidden keys", () => {
    let ran = 0;
    const getter = Object.defineProperty({}, "g", { get: () => ++ran, enumerable: true });
    const arrGetter = Object.defineProperty([1, 2], 0, { get: () => ++ran, enumerable: true });
    const protoPolluted = [1, , 3];
    for (const v of [getter, arrGetter, { a: [getter] }, protoPolluted, Object.assign([1], { x: 1 }), Object.defineProperty({}, "h", { value: 1 })]) {
      expect(() => encodeCanonical(v)).toThrow(expect.objectContaining({ code: "UNSERIALIZABLE" }));
    }
    expect(ran).toBe(0);
  });
});
