/** Well-formed UTF-16: the one rule for text that must survive UTF-8 encoders, terminals and databases. */

// A lone surrogate cannot be encoded in UTF-8 (a terminal shows garbage, PostgreSQL refuses the JSON): U+FFFD.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Replaces lone surrogates with U+FFFD (one unit for one unit: the length is kept), so the result is well-formed UTF-16. */
export function toWellFormedText(text: string): string {
  return text.replace(LONE_SURROGATE, "\uFFFD");
}
