/**
 * Text PostgreSQL's jsonb refuses (NUL, lone surrogates: a cut inside an emoji) made storable by the one rule
 * both stores share, adapters-pi's `storableText`: each becomes U+FFFD, the length kept. Applied to every jsonb
 * document the store writes (metadata, journal entries, commit and step records, control requests), so a write
 * the fs store accepts is never refused here (a failed run whose reason held a NUL stayed `running`).
 */
import { storableText } from "@phasekit/adapters-pi/store-kit";

// What JSON.stringify leaves in its output for exactly those characters (it escapes both): a cheap test first.
const SUSPECT = /\\u0000|\\ud[89a-f]/i;

/** `value` with every string (and key) made storable; the same object when nothing needed it. */
export function storableJson<T>(value: T): T {
  const text = JSON.stringify(value);
  // Cleaned from the JSON text, so toJSON (a Date) is read as the database would read it.
  return text === undefined || !SUSPECT.test(text) ? value : (clean(JSON.parse(text)) as T);
}

/**
 * `storableJson(value)` as the JSON text a jsonb parameter takes: the value is stringified once (a parameter
 * given as an object is stringified again by the driver).
 */
export function storableJsonText(value: unknown): string {
  const text = JSON.stringify(value);
  return !SUSPECT.test(text) ? text : JSON.stringify(clean(JSON.parse(text)));
}

function clean(value: unknown): unknown {
  if (typeof value === "string") return storableText(value, Number.POSITIVE_INFINITY);
  if (Array.isArray(value)) return value.map(clean);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[storableText(k, Number.POSITIVE_INFINITY)] = clean(v);
    return out;
  }
  return value;
}
