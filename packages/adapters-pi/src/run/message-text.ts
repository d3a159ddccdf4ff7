/**
 * The pure text rules of reporter messages: one line, bounded length, cut only between graphemes.
 *
 * The unit of the bound is the Unicode code point: it is stricter than "user-perceived characters" (an
 * emoji family of 7 code points counts 7), so the bound also caps memory and terminal width, and unlike
 * UTF-16 units it never invites a cut inside a surrogate pair.
 */
import { toWellFormedText } from "../io/well-formed-text.js";

// A lone surrogate cannot be encoded by a terminal or in UTF-8; it becomes U+FFFD before anything else.
export { toWellFormedText };

/** Default bound of a message, in code points, ellipsis included. */
export const MESSAGE_MAX_CODE_POINTS = 140;

/** The mark that ends a truncated message (one code point). */
export const ELLIPSIS = "…";

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });

// Control characters (ESC included) would let a message move the cursor or recolour the host's terminal.
const CONTROL_OR_SPACE = /[\s\p{Cc}]+/gu;

/** Number of code points in `text` (a surrogate pair counts once). */
export function codePointLength(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** Collapses every run of whitespace or control characters to one space and trims the ends. */
export function collapseWhitespace(text: string): string {
  return text.replace(CONTROL_OR_SPACE, " ").trim();
}

/**
 * Cuts `text` to at most `max` code points, ending with `…` when anything was dropped; cuts happen only at
 * grapheme boundaries, so a ZWJ emoji sequence or a letter with its combining marks is kept whole or dropped whole.
 */
export function truncateGraphemes(text: string, max: number = MESSAGE_MAX_CODE_POINTS): string {
  if (codePointLength(text) <= max) return text;
  if (max < 1) return "";
  const budget = max - 1; // room left for the ellipsis
  let used = 0;
  let end = 0;
  for (const { segment, index } of segmenter.segment(text)) {
    const size = codePointLength(segment);
    if (used + size > budget) break;
    used += size;
    end = index + segment.length;
  }
  return `${text.slice(0, end).trimEnd()}${ELLIPSIS}`;
}

/** The text a reporter shows: well-formed, one line, whitespace collapsed, at most `max` code points. */
export function formatMessageText(text: string, max: number = MESSAGE_MAX_CODE_POINTS): string {
  return truncateGraphemes(collapseWhitespace(toWellFormedText(text)), max);
}
