import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { codePointLength, collapseWhitespace, ELLIPSIS, formatMessageText, truncateGraphemes } from "../src/run/message-text.js";

const RUNS = process.env.CI === "true" ? 1_000 : 100;
const hasLoneSurrogate = (s: string): boolean => /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);
const graphemes = (s: string): string[] => [...new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(s)].map((x) => x.segment);

describe("message text", () => {
  it("keeps a short message as is and collapses whitespace and control characters", () => {
    expect(formatMessageText("  hello \n\t world  ")).toBe("hello world");
    expect(formatMessageText("red\u001b[31m alert")).toBe("red [31m alert");
    expect(collapseWhitespace("\r\n")).toBe("");
  });

  it("truncates to exactly 140 code points with an ellipsis", () => {
    const out = formatMessageText("a".repeat(500));
    expect(codePointLength(out)).toBe(140);
    expect(out.endsWith(ELLIPSIS)).toBe(true);
    expect(formatMessageText("a".repeat(140))).toBe("a".repeat(140));
  });

  it("never splits a surrogate pair: an astral emoji at the cut is dropped whole", () => {
    const out = truncateGraphemes(`${"a".repeat(138)}😀😀😀`, 140);
    expect(out).toBe(`${"a".repeat(138)}😀${ELLIPSIS}`);
    expect(hasLoneSurrogate(out)).toBe(false);
  });

  it("never splits a ZWJ family or a flag", () => {
    const family = "👨‍👩‍👧‍👦"; // 7 code points, one grapheme
    const out = truncateGraphemes(`${"a".repeat(135)}${family}tail`, 140);
    expect(out).toBe(`${"a".repeat(135)}${ELLIPSIS}`);
    const flags = "🇫🇷".repeat(100);
    const cut = truncateGraphemes(flags, 140);
    expect(cut).toBe(`${"🇫🇷".repeat(69)}${ELLIPSIS}`);
  });

  it("keeps combining marks with their letter", () => {
    const e = "e\u0301"; // é as two code points
    const out = truncateGraphemes(e.repeat(100), 140);
    expect(out).toBe(`${e.repeat(69)}${ELLIPSIS}`);
  });

  it("replaces lone surrogates with U+FFFD", () => {
    expect(formatMessageText("a\uD800b\uDC00c")).toBe("a\uFFFDb\uFFFDc");
  });

  it("property: ≤ 140 code points, no lone surrogate, a prefix cut at a grapheme boundary", () => {
    const text = fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 300 }),
      fc.string({ unit: "binary", maxLength: 300 }),
      fc.array(fc.constantFrom("a", " ", "\n", "😀", "👨‍👩‍👧", "🇯🇵", "e\u0301", "\uD83D", "\uDE00", "\u001b"), { maxLength: 400 }).map((a) => a.join("")),
    );
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 200 }), (raw, max) => {
        const out = formatMessageText(raw, max);
        expect(codePointLength(out)).toBeLessThanOrEqual(max);
        expect(hasLoneSurrogate(out)).toBe(false);
        const full = collapseWhitespace(raw.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD"));
        if (out === full) return;
        expect(out.endsWith(ELLIPSIS)).toBe(true);
        const kept = out.slice(0, -1);
        expect(full.startsWith(kept)).toBe(true);
        // kept ends at a grapheme boundary of the full text
        const bounds = new Set<number>([0]);
        let at = 0;
        for (const g of graphemes(full)) bounds.add((at += g.length));
        expect(bounds.has(kept.length)).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });
});
