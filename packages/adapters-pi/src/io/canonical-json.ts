/**
 * Canonical JSON in one pass: keys sorted by UTF-16 code unit, exactly the bytes fast-json-stable-stringify
 * gives for plain JSON, written by the engine's native `JSON.stringify`.
 *
 * One walk checks that the value is plain JSON and notes whether every object's keys are already in order and
 * which keys occur. Then the engine writes the text:
 * - every object already sorted: `JSON.stringify(value)` as is (its fast path);
 * - otherwise `JSON.stringify(value, sortedKeys)`: a replacer *array* makes the engine write each object's
 *   properties in the array's order (ECMA-262 SerializeJSONObject uses the PropertyList), so no copy is made.
 *   A key the object lacks is read through its prototype, so the list is used only when no key is
 *   `in Object.prototype` (`__proto__`, `constructor`, a polluted one), and only when objects × distinct keys
 *   stays near the number of properties (the engine tries every listed key on every object);
 * - else a key-sorted copy (copied only where not already canonical), or the string encoder where the engine
 *   would reorder the copy's keys (integer-like keys) or a key is also on Object.prototype.
 *
 * The fast walk only decides "plain or not"; when it says "not", the strict validator in plain-json.ts walks
 * the value again to build the error that names the path, so errors stay identical and cost nothing on success.
 */
import { assertPlainJson } from "./plain-json.js";
import { checkArrayKeys, checkScalar, enter, item, keysOfPlain, NOT_PLAIN, OBJECT_PROTO, property, reorders } from "./plain-walk.js";

/** Canonical JSON (validated, keys sorted by UTF-16 code unit, optional indent): `encodeCanonical`. */
export function canonicalJson(value: unknown, indent?: number): string {
  return encodeCanonical(value, indent);
}

/** Thrown when the native encoder cannot keep the order: the string encoder takes over. */
const ORDER = Symbol("order");

/**
 * Canonical JSON text of `value` (compact, or indented by `indent` spaces up to 10), validated in the same
 * walk. Throws the same UNSERIALIZABLE WorkflowError as `assertPlainJson` for anything that is not plain JSON.
 */
export function encodeCanonical(value: unknown, indent?: number): string {
  const pad = indent === undefined || indent <= 0 ? "" : " ".repeat(Math.min(indent, 10));
  const scan: Scan = { keys: new Set(), objects: 0, props: 0, sorted: true, last: [] };
  try {
    try {
      check(value, 0, scan);
      const order = scan.sorted ? null : keyOrder(scan);
      // No replacer or space argument when not needed: either one takes the engine off its fast path.
      if (order === null) return pad === "" ? JSON.stringify(value) : JSON.stringify(value, null, pad);
      if (order === TEXT) throw ORDER;
      if (order !== COPY) return pad === "" ? JSON.stringify(value, order) : JSON.stringify(value, order, pad);
      const plain = canonical(value, 0);
      return pad === "" ? JSON.stringify(plain) : JSON.stringify(plain, null, pad);
    } catch (error) {
      if (error !== ORDER) throw error;
      return encode(value, 0, pad, "");
    }
  } catch (error) {
    if (error !== NOT_PLAIN) throw error;
    assertPlainJson(value);
    // The validator accepted what the fast walk refused: our bug, never the caller's fault.
    throw new Error("[phasekit] [json] the canonical encoder refused a value the validator accepts");
  }
}

/** What the checking walk learned: every distinct key, how many objects and properties, all keys in order. */
interface Scan {
  keys: Set<string>;
  objects: number;
  props: number;
  sorted: boolean;
  /** The last key list seen per key count (shapes repeat). */
  last: Array<string[] | undefined>;
}

const COPY = "copy";
const TEXT = "text";

/**
 * The sorted key list for a replacer array; COPY where it would be slow (many distinct keys); TEXT where a key
 * is also on Object.prototype, which both the list (reads it through the prototype) and a copy (assigns it
 * through a polluted setter or read-only property) would get wrong.
 */
function keyOrder(scan: Scan): string[] | typeof COPY | typeof TEXT {
  for (const k of scan.keys) if (k in OBJECT_PROTO) return TEXT;
  if (scan.objects * scan.keys.size > 4 * scan.props + 256) return COPY;
  return [...scan.keys].sort();
}

/** The checks of `canonical` without building anything: only plain JSON passes, and `scan` is filled. */
function check(value: unknown, depth: number, scan: Scan): void {
  if (value === null) return;
  if (typeof value !== "object") return checkScalar(value);
  if (enter(value, depth)) {
    const arr = value as unknown[];
    checkArrayKeys(arr);
    for (let i = 0; i < arr.length; i++) check(item(arr, i), depth + 1, scan);
    return;
  }
  const keys = keysOfPlain(value);
  const n = keys.length;
  scan.objects++;
  scan.props += n;
  // Objects of one shape repeat: keys equal (the same interned strings) to the last ones of that count are
  // already in the set, and comparing them is cheaper than adding them again.
  const last = n < 32 ? scan.last[n] : undefined;
  let seen = last !== undefined;
  for (let i = 0; seen && i < n; i++) seen = (last as string[])[i] === keys[i];
  if (!seen && n < 32) scan.last[n] = keys;
  for (let i = 0; i < n; i++) {
    const k = keys[i] as string;
    if (!seen) {
      if (i > 0 && (keys[i - 1] as string) > k) scan.sorted = false;
      scan.keys.add(k);
    }
    check(property(value, k), depth + 1, scan);
  }
}

function canonical(value: unknown, depth: number): unknown {
  if (value === null) return null;
  if (typeof value !== "object") return checkScalar(value), value;
  if (enter(value, depth)) {
    const arr = value as unknown[];
    checkArrayKeys(arr);
    let copy: unknown[] | undefined;
    for (let i = 0; i < arr.length; i++) {
      const x = item(arr, i);
      const c = canonical(x, depth + 1);
      if (c !== x && copy === undefined) copy = arr.slice(0, i);
      if (copy !== undefined) copy.push(c);
    }
    return copy ?? arr;
  }
  const keys = keysOfPlain(value);
  let sorted = true;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    if (reorders(k)) throw ORDER;
    if (i > 0 && (keys[i - 1] as string) > k) sorted = false;
  }
  if (!sorted) keys.sort();
  let copy: Record<string, unknown> | undefined = sorted ? undefined : {};
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    const x = property(value, k);
    const c = canonical(x, depth + 1);
    if (copy === undefined && c !== x) {
      copy = {};
      for (let j = 0; j < i; j++) copy[keys[j] as string] = (value as Record<string, unknown>)[keys[j] as string];
    }
    if (copy !== undefined) copy[k] = c;
  }
  return copy ?? value;
}

// The fallback: builds the text itself, so any key order survives. Same checks as `canonical`.
function encode(value: unknown, depth: number, pad: string, indent: string): string {
  if (value === null) return "null";
  if (typeof value !== "object") return checkScalar(value), JSON.stringify(value);
  const inner = indent + pad;
  const open = pad === "" ? "" : `\n${inner}`;
  const sep = pad === "" ? "," : `,\n${inner}`;
  const close = pad === "" ? "" : `\n${indent}`;
  const parts: string[] = [];
  let text: string;
  if (enter(value, depth)) {
    const arr = value as unknown[];
    checkArrayKeys(arr);
    for (let i = 0; i < arr.length; i++) parts.push(encode(item(arr, i), depth + 1, pad, inner));
    text = parts.length === 0 ? "[]" : `[${open}${parts.join(sep)}${close}]`;
  } else {
    const colon = pad === "" ? ":" : ": ";
    for (const k of keysOfPlain(value).sort()) parts.push(`${JSON.stringify(k)}${colon}${encode(property(value, k), depth + 1, pad, inner)}`);
    text = parts.length === 0 ? "{}" : `{${open}${parts.join(sep)}${close}}`;
  }
  return text;
}
