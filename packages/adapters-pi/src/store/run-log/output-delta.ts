/**
 * Step outputs stored as deltas (docs/decisions.md D16). A `done` line whose header says `"d":1` holds, instead
 * of the output's canonical JSON, the canonical JSON array
 *
 *   [back, length, baseIsDelta, ops]
 *
 * whose base value lies in the same file at `[own payload offset - back, + length)` (a full value when
 * `baseIsDelta` is 0, another such array when it is 1), and `ops` are the state deltas' operations
 * (state-delta.ts: one delta rule for states and outputs) that turn the base value into this output. A base
 * always lies before the value that names it (`back >= length`), so a chain ends, and a holder starts a full
 * value every MAX_OUTPUT_CHAIN outputs, so a hit in random order applies at most that many deltas; in order (a
 * resume) it applies one, on the output materialized last (`ValueFiles.lastOutput`).
 *
 * What a step hands out is still checked whole: the materialized value's canonical bytes must hash to the
 * step's output fingerprint, else the output is "corrupt" (the step reruns), exactly like an inline value. A
 * chain that cannot be followed at all (a base outside the file, bytes that are no JSON, an envelope of the
 * wrong shape, ops that do not fit their base) is CORRUPT_FILE naming the file and the byte of the value.
 */
import { encodeCanonical } from "../../io/canonical-json.js";
import type { JsonValue } from "../../io/plain-json.js";
import { fingerprintOfCanonical } from "../../engine/fingerprint.js";
import { corrupt } from "./format.js";
import type { ValueLocation } from "./entry-types.js";
import { applyDelta, parseDelta } from "./state-delta.js";
import type { ValueFiles, ValueRead } from "./values.js";

/** Deltas after a full output before the next full one (a hit in random order applies at most this many). */
export const MAX_OUTPUT_CHAIN = 32;

/** The payload of an output delta (see the module comment); `ops` is canonical JSON already. */
export function outputDeltaPayload(back: number, length: number, baseIsDelta: boolean, ops: string): string {
  return `[${back},${length},${baseIsDelta ? 1 : 0},${ops}]`;
}

/**
 * The canonical text of the output at `loc` (materialized when it is a delta), checked against `fingerprint`.
 * Missing file or unreadable bytes of the value itself: `missing`/`corrupt` as for any value; a delta chain that
 * cannot be followed: CORRUPT_FILE (thrown).
 */
export function readOutputText(values: ValueFiles, loc: ValueLocation, fingerprint: string | undefined): ValueRead {
  if (loc.delta !== true) return values.read(loc, fingerprint);
  try {
    values.descriptor(loc.file);
  } catch (error) {
    return { ok: false, reason: "missing", detail: String(error) };
  }
  const value = materialize(values, loc);
  const text = fingerprint === undefined ? encodeCanonical(value) : verifiedText(value, fingerprint);
  if (text === undefined) {
    return { ok: false, reason: "corrupt", detail: `${loc.file} at byte ${loc.offset}: the output its delta chain gives does not match ${fingerprint}` };
  }
  values.lastOutput = { file: loc.file, offset: loc.offset, value };
  return { ok: true, text };
}

/**
 * The canonical JSON of a materialized `value` if it hashes to `fingerprint`, else undefined. The engine's own
 * `JSON.stringify` is tried first: the value was built from parsed canonical text, so its keys are nearly always
 * in canonical order already, and text that hashes to the fingerprint *is* the canonical text (sha256); only
 * when it does not (a key a delta added out of order, an integer-like key) is the canonical encoder run.
 */
export function verifiedText(value: JsonValue, fingerprint: string): string | undefined {
  const fast = JSON.stringify(value);
  if (fingerprintOfCanonical(fast) === fingerprint) return fast;
  const text = encodeCanonical(value);
  return text !== fast && fingerprintOfCanonical(text) === fingerprint ? text : undefined;
}

/** Most links a chain may have before a reader refuses it: at least twice the longest chain a writer makes (PostgreSQL writes whole every 65 outputs, the fs log every MAX_OUTPUT_CHAIN + 1). */
export const MAX_CHAIN_LINKS = 4 * MAX_OUTPUT_CHAIN;

interface Link {
  loc: ValueLocation;
  ops: unknown;
}

/**
 * The value at `loc`, following its chain back to a full value (or to the output materialized last), then
 * applying the deltas forward. The value is shared with the cache: callers never hand it out or mutate it.
 */
export function materialize(values: ValueFiles, loc: ValueLocation): JsonValue {
  const links: Link[] = [];
  let at: ValueLocation = loc;
  let value: JsonValue | undefined;
  let window: Window | undefined;
  for (;;) {
    const cached = values.lastOutput;
    if (cached !== undefined && cached.file === at.file && cached.offset === at.offset) {
      value = cached.value as JsonValue;
      break;
    }
    // Walking past the first link (a hit out of order): the bases lie just before, so one read of the bytes
    // before this base serves the rest of the walk (a chain of 32 outputs spans a few tens of KB).
    if (links.length === 1 && window === undefined && at.length <= WINDOW) window = windowBefore(values, at);
    const json = readJson(values, at, at.delta === true ? "an output delta" : "an output a delta is based on", window);
    if (at.delta !== true) {
      value = json as JsonValue;
      break;
    }
    if (links.length >= MAX_CHAIN_LINKS) throw corrupt(loc.file, loc.offset, `an output delta chain longer than ${MAX_CHAIN_LINKS} links`);
    const base = baseOf(at, json);
    links.push({ loc: at, ops: (json as unknown[])[3] });
    at = base;
  }
  // One set of copied containers for the whole chain: each is copied once, not once per delta. A full value
  // parsed just now is ours to change; the cached one is not.
  const fresh = new Set<object>();
  if (values.lastOutput?.value !== value && typeof value === "object" && value !== null) fresh.add(value);
  for (let i = links.length - 1; i >= 0; i--) {
    const link = links[i] as Link;
    try {
      value = applyDelta(value, parseDelta(link.ops), fresh);
    } catch (error) {
      throw corrupt(link.loc.file, link.loc.offset, `an output delta that does not apply to the value it names as its base (${(error as Error).message})`, error);
    }
  }
  return value;
}

/** Bytes of a file read at once, from `offset` on. */
interface Window {
  offset: number;
  bytes: Buffer;
}

/** Bytes read at once when a walk goes past its first link. */
const WINDOW = 64 * 1024;

// The bytes up to the end of `loc`, from up to WINDOW before it (undefined if that read fails: each value is
// then read, and reported, on its own).
function windowBefore(values: ValueFiles, loc: ValueLocation): Window | undefined {
  const end = loc.offset + loc.length;
  const offset = Math.max(0, end - WINDOW);
  const r = values.readBytes({ file: loc.file, offset, length: end - offset });
  return r.ok ? { offset, bytes: r.bytes } : undefined;
}

function readJson(values: ValueFiles, loc: ValueLocation, what: string, window?: Window): unknown {
  let text: string;
  const from = window === undefined ? -1 : loc.offset - window.offset;
  if (window !== undefined && from >= 0 && from + loc.length <= window.bytes.length) text = window.bytes.toString("utf8", from, from + loc.length);
  else {
    const r = values.readBytes(loc);
    if (!r.ok) throw corrupt(loc.file, loc.offset, `${what} that cannot be read (${r.detail})`);
    text = r.bytes.toString("utf8");
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw corrupt(loc.file, loc.offset, `${what} that is not JSON`, error);
  }
}

// The envelope of a delta at `loc`, checked: four items, a base that lies wholly before this value.
function baseOf(loc: ValueLocation, json: unknown): ValueLocation {
  const ok =
    Array.isArray(json) &&
    json.length === 4 &&
    Number.isSafeInteger(json[0]) &&
    Number.isSafeInteger(json[1]) &&
    (json[2] === 0 || json[2] === 1) &&
    (json[1] as number) > 0 &&
    (json[0] as number) >= (json[1] as number) &&
    (json[0] as number) <= loc.offset;
  if (!ok) throw corrupt(loc.file, loc.offset, `an output delta whose envelope is not [back, length, 0|1, ops] naming a value before it (${JSON.stringify(json)?.slice(0, 80)})`);
  const [back, length, kind] = json as [number, number, 0 | 1];
  return { file: loc.file, offset: loc.offset - back, length, delta: kind === 1 };
}
