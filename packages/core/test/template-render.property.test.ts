/**
 * `renderTemplate` scans by hand for speed; this holds it to the one-line reference it replaced (a replace with
 * the PLACEHOLDER pattern): the same text for any template, values and allowlist, braces and near-placeholders
 * included.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FrozenSet } from "../src/definitions/frozen.js";
import { PLACEHOLDER_SOURCE, renderTemplate, type TemplateVars } from "../src/definitions/template.js";

function reference(template: string, vars: TemplateVars, allowlist: ReadonlySet<string>): string {
  return template.replace(new RegExp(PLACEHOLDER_SOURCE, "g"), (whole: string, name: string) => {
    if (!allowlist.has(name) || !Object.hasOwn(vars, name)) return whole;
    const value = vars[name];
    return value === undefined ? whole : String(value);
  });
}

const NAMES = ["a", "b", "_x", "toolName", "n1", "1n", "__proto__", "constructor", "a b", ""];
const piece = fc.oneof(
  fc.constantFrom("{", "}", "{{", "}}", " ", "x", "{1}", "{ a}", "{a }", "é", "\n", "$&", "$1"),
  fc.constantFrom(...NAMES).map((n) => `{${n}}`),
  fc.string({ maxLength: 4 }),
);

describe("renderTemplate", () => {
  it("renders exactly what the PLACEHOLDER replace renders", () => {
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 14 }).map((p) => p.join("")),
        fc.dictionary(fc.constantFrom(...NAMES), fc.oneof(fc.string({ maxLength: 5 }), fc.integer(), fc.constant(undefined), fc.constantFrom("{a}", "$&"))),
        fc.subarray(NAMES),
        (template, vars, allowed) => {
          const allowlist = new FrozenSet(allowed);
          expect(renderTemplate(template, vars, allowlist)).toBe(reference(template, vars, allowlist));
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it("a value is never scanned again, and an inherited key is no value", () => {
    const allow = new FrozenSet(["a", "b", "toString"]);
    expect(renderTemplate("{a}{b}", { a: "{b}", b: "B" }, allow)).toBe("{b}B");
    expect(renderTemplate("{toString}", {}, allow)).toBe("{toString}");
  });
});
