/**
 * The boundary of compileDefinitions: a raw definition is read once into own, plain data (null-prototype objects
 * and plain arrays), and every later check, zod included, reads that copy. zod reads inherited properties while
 * the structural checks read own ones; before this copy a definition built with `Object.create(defaults)` could
 * pass zod with a reference cycle the reference checks never saw (and the nesting fold ran out of heap).
 *
 * Refused, with the field named: a property inherited from a prototype other than Object.prototype, an accessor
 * (a getter is code, not data, and may answer differently on every read), a Map/Set/Date or other non-plain
 * object, an array with its own prototype, and a cycle. Iterative, so depth costs no stack; a value reached
 * twice (not a cycle) is copied once.
 */
import type { FieldPath } from "../errors/problems.js";

/** Why a value is not plain data, and where. */
export interface NotPlain {
  readonly path: FieldPath;
  readonly reason: string;
}

/** The plain copy, or the first place that is not plain data. */
export type PlainResult = { readonly ok: true; readonly value: unknown } | ({ readonly ok: false } & NotPlain);

interface Frame {
  readonly src: object;
  readonly dst: Record<string, unknown> | unknown[];
  readonly keys: readonly string[];
  /** Where this container is: its parent frame and its key there (a path is built only for a refusal). */
  readonly parent: Frame | undefined;
  readonly key: PropertyKey | undefined;
  next: number;
}

/** A description of what kind of non-plain object `value` is, for the refusal. */
function kindOf(value: object): string {
  if (value instanceof Map) return "a Map";
  if (value instanceof Set) return "a Set";
  if (value instanceof Date) return "a Date";
  if (value instanceof RegExp) return "a RegExp";
  return "an object with a prototype";
}

/** The first property that `value` inherits from a prototype below Object.prototype, if any. */
function inheritedKey(value: object): string | undefined {
  for (let proto = Object.getPrototypeOf(value) as object | null; proto !== null && proto !== Object.prototype; proto = Object.getPrototypeOf(proto) as object | null) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name !== "constructor" && !Object.hasOwn(value, name)) return name;
    }
  }
  return undefined;
}

/** Checks the container itself and lists the keys to copy; a NotPlain for a container that is not plain. */
function open(value: object, path: () => PropertyKey[]): { keys: string[]; dst: Record<string, unknown> | unknown[] } | NotPlain {
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return { path: path(), reason: "is an array with its own prototype; pass a plain array" };
    return { keys: Array.from({ length: value.length }, (_, i) => String(i)), dst: new Array<unknown>(value.length) };
  }
  const proto = Object.getPrototypeOf(value) as object | null;
  if (proto !== null && proto !== Object.prototype) {
    if (value instanceof Map || value instanceof Set || value instanceof Date || value instanceof RegExp) {
      return { path: path(), reason: `is ${kindOf(value)}, not plain data; write a plain object or array` };
    }
    const inherited = inheritedKey(value);
    if (inherited !== undefined) return { path: [...path(), inherited], reason: "is inherited from a prototype, not an own field; copy it onto the object ({ ...defaults, ...value })" };
  }
  return { keys: Object.getOwnPropertyNames(value), dst: Object.create(null) as Record<string, unknown> };
}

/** The path of `key` inside the container of `frame`. */
function pathOf(frame: Frame | undefined, key: PropertyKey | undefined): PropertyKey[] {
  const path: PropertyKey[] = key === undefined ? [] : [key];
  for (let f = frame; f !== undefined && f.key !== undefined; f = f.parent) path.push(f.key);
  return path.reverse();
}

/** Copies `root` into own, plain data, or says where it is not plain. Never calls a getter. */
export function plainCopy(root: unknown): PlainResult {
  if (typeof root !== "object" || root === null) return { ok: true, value: root };
  const copies = new Map<object, Record<string, unknown> | unknown[]>();
  const inProgress = new Set<object>();
  const frames: Frame[] = [];
  const push = (src: object, parent: Frame | undefined, key: PropertyKey | undefined): { ok: true; dst: Frame["dst"] } | ({ ok: false } & NotPlain) => {
    const opened = open(src, () => pathOf(parent, key));
    if ("reason" in opened) return { ok: false, ...opened };
    copies.set(src, opened.dst);
    inProgress.add(src);
    frames.push({ src, dst: opened.dst, keys: opened.keys, parent, key, next: 0 });
    return { ok: true, dst: opened.dst };
  };
  const first = push(root, undefined, undefined);
  if (!first.ok) return first;
  while (frames.length > 0) {
    const frame = frames[frames.length - 1] as Frame;
    const key = frame.keys[frame.next];
    if (key === undefined) {
      inProgress.delete(frame.src);
      frames.pop();
      continue;
    }
    frame.next += 1;
    const at = Array.isArray(frame.dst) ? Number(key) : key;
    const desc = Object.getOwnPropertyDescriptor(frame.src, key);
    if (desc === undefined) continue; // an array hole: reads as undefined everywhere
    if (!("value" in desc)) return { ok: false, path: pathOf(frame, at), reason: "is an accessor (a getter or setter), not a data field; pass plain data" };
    const v: unknown = desc.value;
    let out: unknown = v;
    if (typeof v === "object" && v !== null) {
      if (inProgress.has(v)) return { ok: false, path: pathOf(frame, at), reason: "refers back to an object that contains it (a cycle); pass plain JSON data" };
      const done = copies.get(v);
      if (done !== undefined) out = done;
      else {
        const made = push(v, frame, at);
        if (!made.ok) return made;
        out = made.dst;
      }
    }
    if (Array.isArray(frame.dst)) frame.dst[Number(key)] = out;
    else frame.dst[key] = out;
  }
  return { ok: true, value: first.dst };
}
