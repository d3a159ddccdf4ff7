/** fast-check arbitraries of plain JSON values for the encoders' property tests. */
import fc from "fast-check";

// Keys the engine orders on its own (integer-like, `__proto__`) or that sort oddly by code unit.
export const orderKey = fc.oneof(
  fc.string({ unit: "grapheme-composite", maxLength: 6 }),
  fc.constantFrom("__proto__", "0", "1", "10", "9", "01", "-1", "4294967295", "4294967294", "1e3", "", "constructor", "toString", "\u{1F600}", "\uFFFF", "a"),
  fc.nat().map(String),
);
export const plainJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.string({ unit: "binary", maxLength: 12 }),
    fc.array(tie("value"), { maxLength: 6 }),
    // Built with defineProperty so `__proto__` becomes an own key, as JSON.parse makes it.
    fc.array(fc.tuple(orderKey, tie("value")), { maxLength: 6 }).map((entries) => {
      const o: Record<string, unknown> = {};
      for (const [k, v] of entries) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
      return o;
    }),
  ),
})).value;
