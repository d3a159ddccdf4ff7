/**
 * Canonical JSON and a copy of the value in one walk, for a value the writer keeps after the call (an output chain's
 * base for the next delta): the walk checks the value, builds the copy with its keys sorted, and the engine's
 * `JSON.stringify` writes the text from the copy. Text and copy are made from one read of every property, so they
 * always agree, and the copy shares the value's strings (immutable) instead of parsing its own from the text.
 *
 * Where a copy cannot keep canonical order (an integer-like key, which the engine lists first) or assigning a key
 * would reach Object.prototype (`__proto__`, a polluted one), the text comes from `encodeCanonical` and the copy
 * from parsing it. Anything that is not plain JSON gets `encodeCanonical`'s error, which names the path.
 */
import { encodeCanonical } from "./canonical-json.js";
import type { JsonValue } from "./plain-json.js";
import { checkArrayKeys, checkScalar, enter, item, keysOfPlain, NOT_PLAIN, OBJECT_PROTO, property, reorders } from "./plain-walk.js";

const FALLBACK = Symbol("fallback");

/** The canonical text of `value` and a plain copy equal to `JSON.parse(text)` (its keys in that order). */
export function encodeCanonicalCopy(value: unknown): { text: string; copy: JsonValue } {
  let copy: JsonValue;
  try {
    copy = copyOf(value, 0);
  } catch (error) {
    if (error !== NOT_PLAIN && error !== FALLBACK) throw error;
    // Either the error that names the path, or the text by the encoder that keeps any order.
    const text = encodeCanonical(value);
    return { text, copy: JSON.parse(text) as JsonValue };
  }
  return { text: JSON.stringify(copy), copy };
}

function copyOf(value: unknown, depth: number): JsonValue {
  if (value === null) return null;
  if (typeof value !== "object") {
    checkScalar(value);
    // JSON has no -0: the copy holds what a parse of the text would.
    return value === 0 ? 0 : (value as JsonValue);
  }
  if (enter(value, depth)) {
    const arr = value as unknown[];
    checkArrayKeys(arr);
    const out: JsonValue[] = [];
    for (let i = 0; i < arr.length; i++) out.push(copyOf(item(arr, i), depth + 1));
    return out;
  }
  const keys = keysOfPlain(value);
  let sorted = true;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    if (reorders(k) || k in OBJECT_PROTO) throw FALLBACK;
    if (i > 0 && (keys[i - 1] as string) > k) sorted = false;
  }
  if (!sorted) keys.sort();
  const out: { [key: string]: JsonValue } = {};
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    out[k] = copyOf(property(value, k), depth + 1);
  }
  return out;
}
