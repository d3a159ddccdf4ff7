/**
 * The strict gate in front of every persisted or hashed value: only plain JSON passes. JSON.stringify and
 * fast-json-stable-stringify silently turn a Map into `{}`, a Date into a string and NaN into `null`, so two
 * different values could share a file or a fingerprint; here they are typed errors that name the path.
 *
 * `-0` is accepted and encodes as `0`, exactly as JSON does: a round trip through a file cannot keep the sign,
 * so treating it as a distinct value would make a reloaded input look changed.
 */
import { workflowError } from "@phasekit/core";

/** A value that survives `JSON.stringify` → `JSON.parse` unchanged. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Deeper values are refused: the encoders recurse, and a typed error beats a stack overflow. */
export const MAX_JSON_DEPTH = 1000;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Throws an UNSERIALIZABLE WorkflowError unless `value` is plain JSON; the error names the JSON path and type. */
export function assertPlainJson(value: unknown, path = "$"): asserts value is JsonValue {
  visit(value, { root: path, keys: [], ancestors: new Set<object>() });
}

/** Appends a property name to a JSON path: `$.a`, or `$["odd key"]` when it is not an identifier. */
export function childPath(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  return IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

// The path is kept as a key stack and only turned into text for an error: building it per property was
// most of the validator's cost.
interface Walk {
  root: string;
  keys: Array<string | number>;
  ancestors: Set<object>;
}

function pathOf(w: Walk): string {
  return w.keys.reduce<string>((p, k) => childPath(p, k), w.root);
}

function visit(value: unknown, w: Walk): void {
  switch (typeof value) {
    case "string":
    case "boolean":
      return;
    case "number":
      if (!Number.isFinite(value)) refuse(w, String(value), "JSON has no NaN or Infinity; store it as a string or null");
      return;
    case "object":
      if (value === null) return;
      visitObject(value, w);
      return;
    default:
      refuse(w, typeof value, "remove it or convert it to a string, number, boolean, null, array or plain object");
  }
}

function visitObject(value: object, w: Walk): void {
  if (w.keys.length >= MAX_JSON_DEPTH) refuse(w, `value nested deeper than ${MAX_JSON_DEPTH} levels`, "flatten the value");
  if (w.ancestors.has(value)) refuse(w, "cycle (a value that contains itself)", "break the cycle before storing the value");
  const proto: unknown = Object.getPrototypeOf(value);
  const isArray = Array.isArray(value);
  if (isArray ? proto !== Array.prototype : proto !== Object.prototype && proto !== null) {
    refuse(w, typeName(value), "convert it to a plain object or array first (e.g. Object.fromEntries, toISOString)");
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") {
    refuse(w, "object with a toJSON method", "store the result of toJSON() instead");
  }
  w.ancestors.add(value);
  if (isArray) visitArray(value as unknown[], w);
  else visitProperties(value, w);
  w.ancestors.delete(value);
}

function visitArray(value: unknown[], w: Walk): void {
  for (let i = 0; i < value.length; i++) {
    const desc = Object.getOwnPropertyDescriptor(value, i);
    w.keys.push(i);
    if (desc === undefined) refuse(w, "undefined (an array hole)", "fill the hole with null or remove it");
    if (!("value" in desc)) refuse(w, "getter", "store the computed value, not an accessor");
    visit(desc.value, w);
    w.keys.pop();
  }
  // Every index is present now, so any further own key (besides length) is one JSON would drop.
  if (Reflect.ownKeys(value).length !== value.length + 1) {
    if (Object.getOwnPropertySymbols(value).length > 0) refuse(w, "array with symbol keys", "remove the symbol keys");
    const extra = Object.getOwnPropertyNames(value).find((n) => n !== "length" && !(String(Number(n)) === n && Number(n) < value.length));
    w.keys.push(extra ?? "?");
    refuse(w, "named property on an array", "JSON arrays hold only indexed items");
  }
}

function visitProperties(value: object, w: Walk): void {
  const keys = Object.keys(value);
  // Object.keys lists enumerable string keys only: any other own key is one JSON would drop silently.
  if (Reflect.ownKeys(value).length !== keys.length) {
    if (Object.getOwnPropertySymbols(value).length > 0) refuse(w, "object with symbol keys", "remove the symbol keys");
    const hidden = Object.getOwnPropertyNames(value).find((k) => !Object.prototype.propertyIsEnumerable.call(value, k));
    w.keys.push(hidden ?? "?");
    refuse(w, "non-enumerable property", "JSON would drop it silently; make it enumerable or remove it");
  }
  for (const key of keys) {
    const desc = Object.getOwnPropertyDescriptor(value, key);
    w.keys.push(key);
    if (desc === undefined || !("value" in desc)) refuse(w, "getter", "store the computed value, not an accessor");
    visit(desc.value, w);
    w.keys.pop();
  }
}

function typeName(value: object): string {
  const tag = Object.prototype.toString.call(value).slice(8, -1);
  if (tag !== "Object" && tag !== "Array") return tag;
  const ctor = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor;
  const name = typeof ctor?.name === "string" && ctor.name !== "" ? ctor.name : "anonymous";
  return `class instance (${name})`;
}

function refuse(w: Walk, type: string, hint: string): never {
  const path = pathOf(w);
  throw workflowError("json", "UNSERIALIZABLE", `value at ${path} is not plain JSON: found ${type}.`, {
    path,
    field: path,
    value: type,
    hint,
  });
}
