/**
 * Deep-readonly types: states, definitions and registries are shared between outcomes (structural sharing is
 * what keeps `advance` cheap), so every exported shape is readonly all the way down and a write is a compile
 * error instead of a change to someone else's state.
 */

/** `T` with every property, array and map readonly, recursively. Functions are kept as they are. */
export type DeepReadonly<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends ReadonlyMap<infer K, infer V>
    ? ReadonlyMap<K, DeepReadonly<V>>
    : T extends ReadonlySet<infer V>
      ? ReadonlySet<DeepReadonly<V>>
      : T extends readonly (infer E)[]
        ? readonly DeepReadonly<E>[]
        : T extends object
          ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
          : T;
