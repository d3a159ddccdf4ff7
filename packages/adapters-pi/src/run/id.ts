/**
 * Ids for runs created without a slug: 8 characters of lowercase base36 drawn from crypto randomness, checked
 * against the folders that already exist. 36^8 ≈ 2.8e12 ids, so a retry is rare and a second one rarer still.
 */
import { randomBytes } from "node:crypto";
import { workflowError } from "@phasekit/core";

/** The characters of a run id, in mapping order. */
export const RUN_ID_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

/** Length of a run id. */
export const RUN_ID_LENGTH = 8;

/**
 * Bytes at or above this value are rejected: 252 = 7 × 36 is the largest multiple of 36 that fits in a byte,
 * so `byte % 36` over the accepted bytes hits every character exactly 7 times (no modulo bias).
 */
export const RUN_ID_REJECT_FROM = Math.floor(256 / RUN_ID_ALPHABET.length) * RUN_ID_ALPHABET.length;

const RUN_ID_PATTERN = /^[0-9a-z]{8}$/;

/** A source of random bytes (crypto.randomBytes by default). */
export type RandomBytes = (size: number) => Uint8Array;

/** Options of `generateRunId`. */
export interface GenerateRunIdOptions {
  /** Fresh ids to try before giving up. Default 10. */
  maxAttempts?: number;
}

/** True when `value` has the shape of a run id. */
export function isRunId(value: unknown): value is string {
  return typeof value === "string" && RUN_ID_PATTERN.test(value);
}

/** Maps random bytes to an id by rejection sampling; asks for more bytes while fewer than 8 were accepted. */
export function runIdFromRandom(random: RandomBytes): string {
  let id = "";
  // Bounded so a broken source (always 255) fails loudly instead of spinning forever.
  for (let draws = 0; draws < 64 && id.length < RUN_ID_LENGTH; draws++) {
    for (const byte of random(16)) {
      if (byte >= RUN_ID_REJECT_FROM) continue;
      id += RUN_ID_ALPHABET[byte % RUN_ID_ALPHABET.length];
      if (id.length === RUN_ID_LENGTH) return id;
    }
  }
  throw workflowError("run-id", "INVALID_OPTIONS", "the random source kept returning rejected bytes (>= 252).", {
    field: "random",
    hint: "pass a uniform byte source such as crypto.randomBytes",
  });
}

/** A fresh run id not taken according to `exists`; retries on collision, then a MAX_ATTEMPTS_REACHED error. */
export async function generateRunId(
  exists: (id: string) => boolean | Promise<boolean>,
  random: RandomBytes = randomBytes,
  options: GenerateRunIdOptions = {},
): Promise<string> {
  const maxAttempts = options.maxAttempts ?? 10;
  const tried: string[] = [];
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    const id = runIdFromRandom(random);
    if (!(await exists(id))) return id;
    tried.push(id);
  }
  throw workflowError("run-id", "MAX_ATTEMPTS_REACHED", `no free run id after ${maxAttempts} attempts (${tried.join(", ")} exist).`, {
    field: "id",
    value: tried,
    hint: "check the random source, or remove stale run folders",
  });
}
