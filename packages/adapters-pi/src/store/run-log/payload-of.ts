/** Where a snapshot index line says its value lies. */

/** A snapshot index line's payload location (`po`/`pl`), if it has one. */
export function payloadOf(r: object): { offset: number; length: number } | undefined {
  const { po, pl } = r as { po?: number; pl?: number };
  return po === undefined || pl === undefined ? undefined : { offset: po, length: pl };
}
