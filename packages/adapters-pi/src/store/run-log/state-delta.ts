/**
 * Deltas between two JSON states, so a run whose 10 KB state changes by 200 B per step stores ~200 B per step.
 * A delta is a list of operations `[path, value]` (set) or `[path]` (delete); arrays of a new length are set
 * whole. Applying the delta to the old state gives the new one exactly (a property test holds it).
 */
import { encodeCanonical } from "../../io/canonical-json.js";
import type { JsonValue } from "../../io/plain-json.js";

/** One change: set the value at `path`, or delete it when the value is absent. */
export type DeltaOp = [path: Array<string | number>] | [path: Array<string | number>, value: JsonValue];

/**
 * A delta read from a log that is no list of operations or does not fit its state. Plain (no file here): the
 * reader that read it (state-keeper.ts `stateOf`) turns it into CORRUPT_FILE naming the file and byte.
 */
export class DeltaError extends Error {
  override readonly name = "DeltaError";
}

/** `value` as a list of operations, or DeltaError: each op is `[path]` or `[path, value]`, path keys strings or indexes. */
export function parseDelta(value: unknown): DeltaOp[] {
  if (!Array.isArray(value)) throw new DeltaError("a delta that is not a list of operations");
  for (const op of value as unknown[]) {
    const ok = Array.isArray(op) && (op.length === 1 || op.length === 2) && Array.isArray(op[0]) && (op[0] as unknown[]).every(isKey);
    if (!ok) throw new DeltaError(`a delta operation ${JSON.stringify(op)?.slice(0, 80)} that is not [path] or [path, value]`);
  }
  return value as DeltaOp[];
}

function isKey(k: unknown): boolean {
  return typeof k === "string" || (Number.isSafeInteger(k) && (k as number) >= 0);
}

/**
 * The rule of when a value is stored as a delta (states and step outputs alike): the canonical text of the
 * operations that turn `from` into `to`, when it is less than half of `fullLength` (the bytes of `to`'s own
 * canonical text); else undefined, and the value is stored whole.
 */
export function smallDelta(from: JsonValue, to: JsonValue, fullLength: number): string | undefined {
  // The walk gives up as soon as the operations it found are already too big (unrelated values: a step miss
  // must not encode a second full copy only to throw it away).
  const budget = { left: fullLength / 2 };
  const ops: DeltaOp[] = [];
  try {
    diff(from, to, [], ops, budget);
  } catch (error) {
    if (error === OVER_BUDGET) return undefined;
    throw error;
  }
  const text = encodeCanonical(ops);
  return text.length * 2 < fullLength ? text : undefined;
}

/** The operations that turn `from` into `to` (empty when they are equal). */
export function diffJson(from: JsonValue, to: JsonValue): DeltaOp[] {
  const ops: DeltaOp[] = [];
  diff(from, to, [], ops, undefined);
  return ops;
}

const OVER_BUDGET = Symbol("over budget");

// Adds `op`; with a budget, takes off a lower bound of the characters its encoding takes (`[[k,…],v]` and a
// comma: a key takes at least 2, a string its length and quotes, a container its JSON's length), so giving up
// never refuses a delta the exact check would take.
function push(ops: DeltaOp[], op: DeltaOp, budget: { left: number } | undefined): void {
  ops.push(op);
  if (budget === undefined) return;
  const v = op[1];
  budget.left -= 4 + op[0].length * 2 + (op.length === 1 ? 0 : 1 + (typeof v === "string" ? v.length + 2 : typeof v === "object" && v !== null ? JSON.stringify(v).length : 1));
  if (budget.left <= 0) throw OVER_BUDGET;
}

function isObject(v: JsonValue): v is { [key: string]: JsonValue } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

// `path` is one stack shared by the whole walk (pushed and popped around each child): an op copies it, so
// equal children (most of a value that changed ~200 B) allocate nothing.
function diff(a: JsonValue, b: JsonValue, path: Array<string | number>, ops: DeltaOp[], budget: { left: number } | undefined): void {
  if (a === b) return;
  if (isObject(a) && isObject(b)) {
    for (const k of Object.keys(b)) {
      path.push(k);
      if (!Object.hasOwn(a, k)) push(ops, [path.slice(), b[k] as JsonValue], budget);
      else diff(a[k] as JsonValue, b[k] as JsonValue, path, ops, budget);
      path.pop();
    }
    for (const k of Object.keys(a)) if (!Object.hasOwn(b, k)) push(ops, [[...path, k]], budget);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    for (let i = 0; i < a.length; i++) {
      path.push(i);
      diff(a[i] as JsonValue, b[i] as JsonValue, path, ops, budget);
      path.pop();
    }
    return;
  }
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null || Array.isArray(a) !== Array.isArray(b) || JSON.stringify(a) !== JSON.stringify(b)) {
    push(ops, [path.slice(), b], budget);
  }
}

/**
 * `from` with `ops` applied; `from` is not modified: a container on an op's path is copied the first time it is
 * changed, and the copy (remembered in `fresh`) takes every later change. Passing one `fresh` set to a sequence
 * of calls (a chain of deltas) copies each container once for the whole chain; a container already in `fresh`
 * belongs to the caller and is changed in place.
 */
export function applyDelta(from: JsonValue, ops: readonly DeltaOp[], fresh: Set<object> = new Set()): JsonValue {
  let root = from;
  for (const op of ops) root = applyOp(root, op[0], 0, op.length === 2 ? { value: op[1] } : undefined, fresh);
  return root;
}

function own<T extends object>(fresh: Set<object>, node: T, copy: () => T): T {
  if (fresh.has(node)) return node;
  const c = copy();
  fresh.add(c);
  return c;
}

function applyOp(node: JsonValue, path: ReadonlyArray<string | number>, i: number, set: { value: JsonValue } | undefined, fresh: Set<object>): JsonValue {
  if (i === path.length) {
    if (set === undefined) throw new DeltaError(`delta path ${JSON.stringify(path)} deletes what it names whole`);
    return set.value;
  }
  const key = path[i] as string | number;
  // Only an existing index: `diff` sets an array of another length whole, and a far index would allocate it.
  if (Array.isArray(node) && typeof key === "number" && key < node.length) {
    const copy = own(fresh, node, () => node.slice());
    copy[key] = applyOp(node[key] as JsonValue, path, i + 1, set, fresh);
    return copy;
  }
  if (isObject(node) && typeof key === "string") {
    const copy = own(fresh, node, () => ({ ...node }));
    if (i === path.length - 1 && set === undefined) delete copy[key];
    else {
      // Own keys only: `diff` never names an inherited one, and a path must not walk into Object.prototype.
      const value = applyOp(Object.hasOwn(node, key) ? (node[key] as JsonValue) : (undefined as unknown as JsonValue), path, i + 1, set, fresh);
      // defineProperty for __proto__: it must stay an own property, as JSON.parse makes it (assignment would
      // set the prototype).
      if (key === "__proto__") Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
      else copy[key] = value;
    }
    return copy;
  }
  throw new DeltaError(`delta path ${JSON.stringify(path)} does not fit the state`);
}
