/**
 * Versioned content fingerprints: `v1:sha256:<hex>` over the canonical encoding (byte for byte what
 * fast-json-stable-stringify gives for plain JSON, proven by test/canonical-json.test.ts), validated in the same
 * walk (the library alone hashes a Map as `{}` and a Date as a string).
 * The version prefix lets a later encoding coexist with stored v1 fingerprints instead of silently mismatching.
 */
import { hash } from "node:crypto";
import { workflowError } from "@phasekit/core";
import { encodeCanonical } from "../io/canonical-json.js";

/** The prefix of every fingerprint this version produces. */
export const FINGERPRINT_PREFIX = "v1:sha256:";

const FINGERPRINT_PATTERN = /^v1:sha256:[0-9a-f]{64}$/;

/** A fingerprint string: `v1:sha256:` followed by 64 lowercase hex digits. */
export type Fingerprint = `v1:sha256:${string}`;

/** Fingerprint of a plain-JSON value; key order never changes it. Throws UNSERIALIZABLE for anything else. */
export function fingerprint(value: unknown): Fingerprint {
  return fingerprintOfCanonical(encodeCanonical(value));
}

/** Fingerprint of text that is already canonical JSON (e.g. an artifact file's bytes), without re-encoding. */
export function fingerprintOfCanonical(canonical: string | Uint8Array): Fingerprint {
  // One-shot hash: no Hash object, which at 1 KB cost about as much as the hashing itself.
  return `${FINGERPRINT_PREFIX}${hash("sha256", canonical)}`;
}

/** True when `value` is a well-formed v1 fingerprint. */
export function isFingerprint(value: unknown): value is Fingerprint {
  return typeof value === "string" && FINGERPRINT_PATTERN.test(value);
}

/** The hex digest of a fingerprint (the content address of an artifact); refuses a malformed one. */
export function fingerprintDigest(value: string): string {
  if (!isFingerprint(value)) {
    throw workflowError("fingerprint", "CORRUPT_FILE", `"${value}" is not a v1 fingerprint.`, {
      value,
      hint: "expected v1:sha256: followed by 64 lowercase hex digits",
    });
  }
  return value.slice(FINGERPRINT_PREFIX.length);
}
