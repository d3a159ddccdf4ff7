/**
 * `describeSchemaIssue`, the one text of a failed schema parse (core's refusals and every adapter check quote it):
 * for any schema and any input it fails on, it answers (never throws) with a non-empty field that names the first
 * issue's path (an unknown key included), under the prefix, and a reason; `text` is `field: reason`.
 */
import fc from "fast-check";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { BudgetsSchema, describeSchemaIssue } from "@phasekit/core";

/** A schema as plain data, so fast-check can shrink it and draw inputs shaped like it. */
type Spec =
  | { t: "string" | "number" | "int" | "bool" | "enum" }
  | { t: "object"; strict: boolean; fields: Array<[string, Spec, boolean]> }
  | { t: "array" | "record"; of: Spec }
  | { t: "union"; a: Spec; b: Spec };

const KEY = fc.oneof(fc.constantFrom("a", "b", "a.b", "0", "x y", "", "constructor", "toString", "é"), fc.string({ maxLength: 4 })).filter((k) => k !== "__proto__");

const { spec } = fc.letrec<{ spec: Spec }>((tie) => ({
  spec: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom<Spec>({ t: "string" }, { t: "number" }, { t: "int" }, { t: "bool" }, { t: "enum" }),
    fc.record({ t: fc.constant("object" as const), strict: fc.boolean(), fields: fc.uniqueArray(fc.tuple(KEY, tie("spec"), fc.boolean()), { maxLength: 3, selector: (f) => f[0] }) }),
    fc.record({ t: fc.constantFrom("array" as const, "record" as const), of: tie("spec") }),
    fc.record({ t: fc.constant("union" as const), a: tie("spec"), b: tie("spec") }),
  ),
}));

function schemaOf(s: Spec): z.ZodType {
  switch (s.t) {
    case "string":
      return z.string().min(1);
    case "number":
      return z.number().min(0);
    case "int":
      return z.number().int().max(10);
    case "bool":
      return z.boolean();
    case "enum":
      return z.enum(["x", "y"]);
    case "object": {
      const shape = Object.fromEntries(s.fields.map(([k, f, optional]) => [k, optional ? schemaOf(f).optional() : schemaOf(f)]));
      return s.strict ? z.strictObject(shape) : z.object(shape);
    }
    case "array":
      return z.array(schemaOf(s.of)).max(3);
    case "record":
      return z.record(z.string(), schemaOf(s.of));
    case "union":
      return z.union([schemaOf(s.a), schemaOf(s.b)]);
  }
}

const JUNK = fc.anything({ maxDepth: 2, withNullPrototype: true, withBigInt: true, withDate: true, withMap: true, withSparseArray: true });

/** An input shaped like `s` at most levels, with junk (a wrong type, an extra key, a missing field) mixed in. */
function inputOf(s: Spec): fc.Arbitrary<unknown> {
  const near = ((): fc.Arbitrary<unknown> => {
    switch (s.t) {
      case "string":
        return fc.string({ maxLength: 3 });
      case "number":
        return fc.double();
      case "int":
        return fc.oneof(fc.integer({ min: -3, max: 20 }), fc.double());
      case "bool":
        return fc.boolean();
      case "enum":
        return fc.constantFrom("x", "y", "z");
      case "object":
        return fc.tuple(fc.tuple(...s.fields.map(([k, f]) => fc.option(inputOf(f).map((v) => [k, v] as const), { freq: 4 }))), fc.option(fc.tuple(KEY, JUNK))).map(([fields, extra]) => {
          const out: Record<string, unknown> = {};
          for (const entry of [...fields, extra]) if (entry !== null) Object.defineProperty(out, entry[0], { value: entry[1], enumerable: true, writable: true, configurable: true });
          return out;
        });
      case "array":
        return fc.array(inputOf(s.of), { maxLength: 4 });
      case "record":
        return fc.dictionary(KEY, inputOf(s.of), { maxKeys: 3 });
      case "union":
        return fc.oneof(inputOf(s.a), inputOf(s.b));
    }
  })();
  return fc.oneof({ weight: 1, arbitrary: JUNK }, { weight: 5, arbitrary: near });
}

/** How `describeSchemaIssue` writes one path segment: `[2]`, `.name` / `name`, or `["odd key"]`. */
const segmentText = (key: PropertyKey): string[] => (typeof key === "number" ? [`[${key}]`] : typeof key === "symbol" ? ["[symbol]"] : [key, `[${JSON.stringify(key)}]`]);

describe("describeSchemaIssue", () => {
  it("property: any failed parse of any input gives a non-empty field naming the first issue's path, never a throw", () => {
    fc.assert(
      fc.property(
        spec.chain((s) => fc.tuple(fc.constant(s), inputOf(s))),
        fc.constantFrom("", "budgets", "facts", "override"),
        ([s, input], prefix) => {
          const parsed = schemaOf(s).safeParse(input);
          fc.pre(!parsed.success);
          const error = (parsed as { error: z.ZodError }).error;
          const described = describeSchemaIssue(error, input, prefix === "" ? undefined : prefix);
          expect(described.ok).toBe(true);
          if (!described.ok) return;
          const { field, reason, text } = described.issue;
          expect(field.length).toBeGreaterThan(0);
          expect(reason.length).toBeGreaterThan(0);
          expect(text).toBe(`${field}: ${reason}`);
          if (prefix !== "") expect(field.startsWith(prefix)).toBe(true);
          const issue = error.issues[0] as z.core.$ZodIssue;
          const path = issue.code === "unrecognized_keys" ? [...issue.path, issue.keys[0] as string] : issue.path;
          if (path.length === 0) expect(field).toBe(prefix === "" ? "(root)" : prefix);
          // Each segment appears, in order, as the field writes it.
          let from = 0;
          for (const key of path) {
            const at = Math.min(...segmentText(key).map((t) => field.indexOf(t, from)).map((i) => (i < 0 ? Infinity : i)));
            expect(at, `${JSON.stringify(String(key))} in ${field}`).not.toBe(Infinity);
            from = at + 1;
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it("reads the budget schema's failure the way runWorkflow and core's controls quote it", () => {
    const input = { turns: -1, foo: 1 };
    const r = describeSchemaIssue(BudgetsSchema.safeParse({ turns: -1 }).error as z.ZodError, input, "budgets");
    expect(r).toEqual({ ok: true, issue: { field: "budgets.turns", reason: "expected a non-negative number, got -1", text: "budgets.turns: expected a non-negative number, got -1", value: -1 } });
    const extra = BudgetsSchema.safeParse({ foo: 1 });
    expect(!extra.success && describeSchemaIssue(extra.error, { foo: 1 })).toMatchObject({ ok: true, issue: { field: "foo", reason: 'unknown field "foo"', value: 1 } });
    const nested = z.object({ list: z.array(z.object({ "a.b": z.string() })) });
    const bad = { list: [{ "a.b": "x" }, { "a.b": 3 }] };
    const n = nested.safeParse(bad);
    expect(!n.success && describeSchemaIssue(n.error, bad)).toMatchObject({ ok: true, issue: { field: 'list[1]["a.b"]', value: 3 } });
  });

  it("refuses a failure that is not a zod error with INVALID_OPTIONS, and still answers for an input whose reading throws", () => {
    expect(describeSchemaIssue(null as never, {})).toMatchObject({ ok: false, error: { code: "INVALID_OPTIONS", details: { field: "failure" } } });
    const failure = z.object({ a: z.string() }).safeParse({ a: 1 }).error as z.ZodError;
    const trapped = new Proxy({}, { get: () => { throw new Error("boom"); }, getOwnPropertyDescriptor: () => { throw new Error("boom"); } });
    expect(describeSchemaIssue(failure, trapped)).toMatchObject({ ok: true, issue: { field: "a", value: undefined } });
  });
});
