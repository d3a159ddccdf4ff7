/**
 * The guards of the fast walks over a value that must be plain JSON (canonical-json.ts, canonical-copy.ts): each
 * throws NOT_PLAIN instead of building a message, so a walk over good input allocates nothing for errors. The
 * encoder that catches NOT_PLAIN then asks the strict validator (plain-json.ts) for the error naming the path.
 */
import { MAX_JSON_DEPTH } from "./plain-json.js";

const ARRAY_PROTO = Array.prototype;
/** Object.prototype: a key also found on it is read through it by a replacer list and assigned through it on a copy. */
export const OBJECT_PROTO = Object.prototype;
const getProto = Object.getPrototypeOf;
const ownKeys = Reflect.ownKeys;
const keysOf = Object.keys;
const namesOf = Object.getOwnPropertyNames;
const symbolsOf = Object.getOwnPropertySymbols;
// Reads an own accessor's getter without allocating a descriptor (a descriptor per property was 3× the cost).
const lookupGetter = (Object.prototype as unknown as { __lookupGetter__: (key: PropertyKey) => unknown }).__lookupGetter__;

/** Thrown by the guards; caught by the encoders, never seen by their callers. */
export const NOT_PLAIN = Symbol("not plain");

export function checkScalar(value: unknown): void {
  switch (typeof value) {
    case "string":
    case "boolean":
      return;
    case "number":
      if (value !== value || value === Infinity || value === -Infinity) throw NOT_PLAIN;
      return;
    default:
      throw NOT_PLAIN;
  }
}

// The checks of plain-json.ts's visitObject without the messages: depth, prototype, toJSON. A cycle needs no
// bookkeeping here (a Set of ancestors was a third of the cost): it runs into the depth limit, and the
// validator then names it as a cycle.
/** Checks a container; true when it is an array. */
export function enter(value: object, depth: number): boolean {
  if (depth >= MAX_JSON_DEPTH) throw NOT_PLAIN;
  const isArray = Array.isArray(value);
  const proto: unknown = getProto(value);
  if (isArray ? proto !== ARRAY_PROTO : proto !== OBJECT_PROTO && proto !== null) throw NOT_PLAIN;
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") throw NOT_PLAIN;
  return isArray;
}

/** Element `i`, refusing a hole or an accessor. */
export function item(arr: unknown[], i: number): unknown {
  if (lookupGetter.call(arr, i) !== undefined || !Object.hasOwn(arr, i)) throw NOT_PLAIN;
  return arr[i];
}

/** Property `key`, refusing an accessor. */
export function property(obj: object, key: string): unknown {
  if (lookupGetter.call(obj, key) !== undefined) throw NOT_PLAIN;
  return (obj as Record<string, unknown>)[key];
}

/** Own enumerable string keys, refusing any other own key (symbol, non-enumerable) that JSON would drop. */
export function keysOfPlain(obj: object): string[] {
  const keys = keysOf(obj);
  // Two cheap counts instead of Reflect.ownKeys (which was 10× Object.keys on a small object).
  if (namesOf(obj).length !== keys.length || symbolsOf(obj).length !== 0) throw NOT_PLAIN;
  return keys;
}

/** Refuses an array with own keys beyond its elements and `length`. */
export function checkArrayKeys(arr: unknown[]): void {
  if (ownKeys(arr).length !== arr.length + 1) throw NOT_PLAIN;
}

/** An integer-like key (the engine lists those first, whatever the insertion order) or `__proto__`. */
export function reorders(key: string): boolean {
  const c = key.charCodeAt(0);
  return (c >= 48 && c <= 57) || key === "__proto__";
}
