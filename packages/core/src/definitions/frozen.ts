/**
 * Read-only collections that cannot be changed in fact: the entries live in a private field, so neither an
 * overridden method nor `Map.prototype.set.call(view, …)` reaches them (a Map subclass that throws from `set`
 * is still a Map, and the base method writes to it). Used for the compiled registry and the template allowlists.
 */

/** A ReadonlyMap over a private copy of `entries`. */
export class FrozenMap<K, V> implements ReadonlyMap<K, V> {
  readonly #map: Map<K, V>;
  constructor(entries: Iterable<readonly [K, V]>) {
    this.#map = new Map(entries);
    Object.freeze(this);
  }
  get size(): number {
    return this.#map.size;
  }
  get(key: K): V | undefined {
    return this.#map.get(key);
  }
  has(key: K): boolean {
    return this.#map.has(key);
  }
  forEach(fn: (value: V, key: K, map: ReadonlyMap<K, V>) => void, thisArg?: unknown): void {
    for (const [k, v] of this.#map) fn.call(thisArg, v, k, this);
  }
  keys(): MapIterator<K> {
    return this.#map.keys();
  }
  values(): MapIterator<V> {
    return this.#map.values();
  }
  entries(): MapIterator<[K, V]> {
    return this.#map.entries();
  }
  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.#map.entries();
  }
  get [Symbol.toStringTag](): string {
    return "FrozenMap";
  }
}

/** A ReadonlySet over a private copy of `values`. */
export class FrozenSet<T> implements ReadonlySet<T> {
  readonly #set: Set<T>;
  constructor(values: Iterable<T>) {
    this.#set = new Set(values);
    Object.freeze(this);
  }
  get size(): number {
    return this.#set.size;
  }
  has(value: T): boolean {
    return this.#set.has(value);
  }
  forEach(fn: (value: T, value2: T, set: ReadonlySet<T>) => void, thisArg?: unknown): void {
    for (const v of this.#set) fn.call(thisArg, v, v, this);
  }
  keys(): SetIterator<T> {
    return this.#set.keys();
  }
  values(): SetIterator<T> {
    return this.#set.values();
  }
  entries(): SetIterator<[T, T]> {
    return this.#set.entries();
  }
  [Symbol.iterator](): SetIterator<T> {
    return this.#set.values();
  }
  get [Symbol.toStringTag](): string {
    return "FrozenSet";
  }
}

// The classes themselves are frozen too, so a caller cannot patch `get` or `has` for every instance.
Object.freeze(FrozenMap.prototype);
Object.freeze(FrozenMap);
Object.freeze(FrozenSet.prototype);
Object.freeze(FrozenSet);
