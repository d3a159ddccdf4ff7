/**
 * A canonical fingerprint of one compiled workflow: its definition as JSON with sorted keys, hashed (FNV-1a,
 * two 32-bit lanes; core has no crypto and needs none: this tells versions apart, it does not authenticate).
 * Equal definitions give equal fingerprints whatever the key order of the file they came from.
 */

/** Canonical JSON: object keys sorted by code unit, arrays in order, `undefined` fields left out. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v)).join(",")}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(",")}}`;
}

/**
 * A workflow's fingerprint: 16 hex digits for the whole definition. One hash per workflow, so a run that
 * records the fingerprints of the workflows it reaches stays small whatever their size (state v2 also kept 8
 * digits per phase: a 10,000-phase workflow made a 90 KB state). Saying which phases changed needs the
 * definitions the run started with, not their hash.
 */
export function workflowFingerprint(def: { readonly phases: readonly unknown[] }): string {
  return fingerprint(def);
}

/** The fingerprint format a state records (see `workflowFingerprint`). */
export const FINGERPRINT_PATTERN = /^[0-9a-f]{16}$/;

/** 16 hex digits identifying `value`'s canonical JSON. */
export function fingerprint(value: unknown): string {
  return hash(canonicalJson(value));
}

function hash(text: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) >>> 0;
  }
  return h1.toString(16).padStart(8, "0") + h2.toString(16).padStart(8, "0");
}
