import { describe, it, expect } from "vitest";
import fc from "fast-check";
import stableStringify from "fast-json-stable-stringify";
import { isWorkflowError } from "@phasekit/core";
import { fingerprint, isFingerprint, fingerprintDigest } from "../src/engine/fingerprint.js";
import { assertPlainJson } from "../src/io/plain-json.js";
import { canonicalJson } from "../src/io/canonical-json.js";

const RUNS = process.env.CI === "true" ? 1000 : 200;

class Point {
  constructor(
    public x = 1,
    public y = 2,
  ) {}
}

function cyclic(): unknown {
  const a: { self?: unknown; list: unknown[] } = { list: [] };
  a.list.push({ back: a });
  return a;
}

const rejected: Array<[string, () => unknown, string, RegExp]> = [
  ["Map", () => ({ m: new Map([["a", 1]]) }), "$.m", /Map/],
  ["Set", () => [new Set([1])], "$[0]", /Set/],
  ["Date", () => ({ at: new Date(0) }), "$.at", /Date/],
  ["BigInt", () => ({ n: 1n }), "$.n", /bigint/],
  ["NaN", () => ({ a: [1, NaN] }), "$.a[1]", /NaN/],
  ["Infinity", () => Infinity, "$", /Infinity/],
  ["-Infinity", () => ({ x: -Infinity }), "$.x", /-Infinity/],
  ["undefined", () => undefined, "$", /undefined/],
  ["undefined property", () => ({ a: 1, b: undefined }), "$.b", /undefined/],
  ["array hole", () => [1, , 3], "$[1]", /hole/],
  ["function", () => ({ f: () => 1 }), "$.f", /function/],
  ["symbol value", () => ({ s: Symbol("x") }), "$.s", /symbol/],
  ["symbol key", () => ({ [Symbol("k")]: 1 }), "$", /symbol keys/],
  ["cycle", cyclic, "$.list[0].back", /cycle/],
  ["class instance", () => ({ p: new Point() }), "$.p", /class instance \(Point\)/],
  ["RegExp", () => /x/, "$", /RegExp/],
  ["Error", () => ({ e: new Error("boom") }), "$.e", /Error/],
  ["typed array", () => ({ bytes: new Uint8Array([1, 2]) }), "$.bytes", /Uint8Array/],
  ["own toJSON", () => ({ v: { toJSON: () => "x" } }), "$.v", /toJSON/],
  ["getter", () => Object.defineProperty({}, "g", { get: () => 1, enumerable: true }), "$.g", /getter/],
  ["non-enumerable", () => Object.defineProperty({}, "h", { value: 1, enumerable: false }), "$.h", /non-enumerable/],
  ["array subclass", () => ({ a: new (class Items extends Array {})() }), "$.a", /class instance/],
  ["named property on array", () => Object.assign([1, 2], { extra: true }), "$.extra", /named property/],
  ["boxed string", () => ({ s: new String("x") }), "$.s", /String/],
  ["odd key path", () => ({ "a b": { c: undefined } }), '$["a b"].c', /undefined/],
];

describe("fingerprint: rejected values", () => {
  it.each(rejected)("%s is an UNSERIALIZABLE error naming its path", (_name, make, path, type) => {
    const value = make();
    let caught: unknown;
    try {
      fingerprint(value);
    } catch (e) {
      caught = e;
    }
    expect(isWorkflowError(caught, "UNSERIALIZABLE")).toBe(true);
    const err = caught as { message: string; details: { path?: string; value?: unknown } };
    expect(err.details.path).toBe(path);
    expect(String(err.details.value)).toMatch(type);
    expect(err.message).toContain(`[phasekit] [json] value at ${path}`);
  });

  it("refuses nesting deeper than the encoders can handle, with a typed error", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 5000; i++) deep = [deep];
    expect(() => fingerprint(deep)).toThrow(/nested deeper/);
  });
});

describe("fingerprint: look-alikes hash differently", () => {
  const pairs: Array<[unknown, unknown]> = [
    [{ a: 1 }, { a: "1" }],
    [[1, 2], [2, 1]],
    ["", null],
    [0, "0"],
    [0, false],
    [null, "null"],
    [true, "true"],
    [[], {}],
    [{ a: null }, {}],
    [[null], []],
    [{ a: { b: 1 } }, { "a.b": 1 }],
    [1, 1.0000000000001],
    [{ a: [] }, { a: {} }],
    ["a\u0000", "a"],
    [{ k: 1, l: 2 }, { k: 2, l: 1 }],
  ];
  it.each(pairs)("%j ≠ %j", (a, b) => {
    expect(fingerprint(a)).not.toBe(fingerprint(b));
  });

  it("has the versioned shape and a digest", () => {
    const f = fingerprint({ a: 1 });
    expect(isFingerprint(f)).toBe(true);
    expect(f).toMatch(/^v1:sha256:[0-9a-f]{64}$/);
    expect(fingerprintDigest(f)).toHaveLength(64);
    expect(() => fingerprintDigest("v2:md5:abc")).toThrow(/not a v1 fingerprint/);
  });

  it("treats -0 as 0, as a JSON round trip does", () => {
    expect(fingerprint({ x: -0 })).toBe(fingerprint({ x: 0 }));
  });

  it("is stable across null-prototype and ordinary objects with the same content", () => {
    const bare = Object.assign(Object.create(null) as object, { b: 2, a: 1 });
    expect(fingerprint(bare)).toBe(fingerprint({ a: 1, b: 2 }));
  });
});

function shuffleKeys(value: unknown, rnd: () => number): unknown {
  if (Array.isArray(value)) return value.map((v) => shuffleKeys(v, rnd));
  if (value === null || typeof value !== "object") return value;
  const entries = Object.entries(value);
  for (let i = entries.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [entries[i], entries[j]] = [entries[j]!, entries[i]!];
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries) Object.defineProperty(out, k, { value: shuffleKeys(v, rnd), enumerable: true, writable: true, configurable: true });
  return out;
}

describe("fingerprint: properties", () => {
  it("key order never changes a hash", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer(), (value, seed) => {
        let s = seed;
        const rnd = () => ((s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x80000000);
        expect(fingerprint(shuffleKeys(value, rnd))).toBe(fingerprint(value));
      }),
      { numRuns: RUNS },
    );
  });

  it("canonicalJson equals fast-json-stable-stringify and parses back to the same hash", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(text).toBe(stableStringify(value));
        expect(fingerprint(JSON.parse(text))).toBe(fingerprint(value));
        expect(JSON.parse(canonicalJson(value, 2))).toEqual(JSON.parse(text));
      }),
      { numRuns: RUNS },
    );
  });

  it("assertPlainJson throws nothing but a WorkflowError, and what it accepts survives a JSON round trip", () => {
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
        let accepted = true;
        try {
          assertPlainJson(value);
        } catch (e) {
          accepted = false;
          expect(isWorkflowError(e, "UNSERIALIZABLE")).toBe(true);
        }
        if (accepted) expect(JSON.parse(JSON.stringify(value))).toEqual(JSON.parse(canonicalJson(value)));
      }),
      { numRuns: RUNS },
    );
  });
});
