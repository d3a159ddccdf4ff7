/**
 * The error text a failed step's record keeps: one rule for every store (the fs run log, PostgreSQL), so the
 * same failure reads the same wherever the run lives.
 */
import { toWellFormedText } from "../io/well-formed-text.js";

/** The most UTF-16 units of error text a step record keeps (the step record schema's bound). */
export const MAX_STEP_ERROR_CHARS = 10_000;

// NUL ends a C string and PostgreSQL refuses it in text and jsonb; it becomes U+FFFD like a lone surrogate.
const NUL = /\u0000/g;

/**
 * `Name: message` of a thrown Error (or the thrown value as text), cut to MAX_STEP_ERROR_CHARS, then made
 * storable everywhere: NUL and lone surrogates (a cut may split a pair) become U+FFFD, keeping the length.
 */
export function stepErrorText(error: unknown): string {
  return storableText(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
}

/**
 * Any reason text a record keeps (a step's error, a run's failure reason, a control request's reason): cut to
 * `max` UTF-16 units and made storable the same way everywhere.
 */
export function storableText(text: string, max = MAX_STEP_ERROR_CHARS): string {
  return toWellFormedText(text.slice(0, max)).replace(NUL, "\uFFFD");
}
