/**
 * The type-level twin of `assertPlainJson` (plain-json.ts): which TypeScript types are plain JSON. `JsonValue`
 * alone refuses ordinary types (an `interface` has no index signature, a readonly array is not an array), so a
 * step's output is checked structurally instead: every field is walked and a value that JSON would change or
 * drop (a Date, a function, a Map, a class instance's methods, `undefined` in a required field) becomes a
 * message type that names the field, which is what the compiler prints.
 */
import type { JsonValue } from "./plain-json.js";

/** The compiler's message for a field that is not plain JSON: the field's path, what it is, and the fix. */
export type NotJson<Path extends string, What extends string, Fix extends string> = `✗ ${Path} is ${What}, not plain JSON: ${Fix}`;

// Values JSON.stringify turns into something else (or throws on), each with the fix the runtime error gives.
type Special<T, P extends string> =
  T extends Date ? NotJson<P, "a Date", "return date.toISOString()">
  : T extends ReadonlyMap<unknown, unknown> ? NotJson<P, "a Map", "return Object.fromEntries(map)">
  : T extends ReadonlySet<unknown> ? NotJson<P, "a Set", "return [...set]">
  : T extends RegExp ? NotJson<P, "a RegExp", "return regexp.source">
  : T extends Error ? NotJson<P, "an Error", "return { message: error.message }">
  : T extends PromiseLike<unknown> ? NotJson<P, "a Promise", "await it first">
  : T extends ArrayBuffer | ArrayBufferView ? NotJson<P, "binary data", "return a base64 string">
  : never;

/**
 * `T` itself when every part of it is plain JSON, else the same shape with each offending part replaced by a
 * `NotJson` message (so `T extends JsonChecked<T>` fails exactly there). `any` passes (the runtime check still runs).
 */
export type JsonChecked<T, P extends string = "output", Root extends boolean = false> =
  0 extends 1 & T ? T
  : unknown extends T ? NotJson<P, "unknown", "narrow it, or declare the value as JsonValue">
  : T extends JsonValue ? T
  : T extends string | number | boolean | null ? T
  : T extends undefined | void ? (Root extends true ? T : NotJson<P, "undefined", "JSON drops it; make the field optional or use null">)
  : T extends bigint ? NotJson<P, "a bigint", "return String(value)">
  : T extends symbol ? NotJson<P, "a symbol", "return its description">
  : T extends (...args: never[]) => unknown ? NotJson<P, "a function", "return data, not behaviour (a class instance's method counts)">
  : [Special<T, P>] extends [never] ? (T extends readonly unknown[] ? CheckedArray<T, P> : CheckedObject<T, P>)
  : Special<T, P>;

type CheckedArray<T extends readonly unknown[], P extends string> = { [K in keyof T]: JsonChecked<T[K], `${P}[${K extends `${number}` ? K : "i"}]`> };
// An optional field may be absent (an absent key is JSON), so its `undefined` passes here; a present `undefined`
// is refused by the runtime check, which can tell the two apart.
type CheckedObject<T, P extends string> = {
  [K in keyof T]: K extends string
    ? {} extends Pick<T, K> ? JsonChecked<Exclude<T[K], undefined>, `${P}.${K}`> | undefined : JsonChecked<T[K], `${P}.${K}`>
    : NotJson<P, "keyed by a symbol", "use string keys">;
};

/** The value a step stores and gives back for a `T` that passed `JsonChecked`: nothing becomes null. */
export type JsonForm<T> = [T] extends [void | undefined] ? null : undefined extends T ? (0 extends 1 & T ? T : Exclude<T, undefined | void> | null) : T;
