/**
 * Workflow states in the run log, stored so that the bytes grow with what changed: a state that differs from
 * the previous one by a small delta is stored as that delta; a full state every MAX_CHAIN deltas (or when the
 * delta is not much smaller) bounds the work of rebuilding it.
 */
import { encodeCanonical } from "../../io/canonical-json.js";
import type { JsonValue } from "../../io/plain-json.js";
import type { LogParts } from "./log-parts.js";
import { corrupt, encodeLine } from "./format.js";
import { applyDelta, diffJson, parseDelta } from "./state-delta.js";
import type { RunIndex, ValueLocation } from "./run-index.js";
import type { ValueFiles } from "./values.js";

/** Deltas after a full state before the next full one. */
export const MAX_CHAIN = 64;

/** Keeps the latest state (materialized on first use) and appends new ones. */
export class StateKeeper {
  private cached: { n: number; value: JsonValue } | undefined;

  constructor(private readonly parts: LogParts) {}

  /** The latest state, rebuilt from its full state and deltas on first use; undefined when none was stored. */
  current(): JsonValue | undefined {
    const chain = this.parts.index.state;
    if (chain.full === undefined) return undefined;
    if (this.cached?.n === chain.n) return this.cached.value;
    const value = stateOf(this.parts.index, this.parts.values);
    if (value !== undefined) this.cached = { n: chain.n, value };
    return value;
  }

  /** Appends `state`, as a delta when that is less than half the full encoding. */
  async put(state: JsonValue): Promise<void> {
    const { parts } = this;
    const full = encodeCanonical(state);
    const prev = this.current();
    const chain = parts.index.state;
    let payload = full;
    let delta: 0 | 1 = 0;
    if (prev !== undefined && chain.deltas.length < MAX_CHAIN) {
      const ops = encodeCanonical(diffJson(prev, state));
      if (ops.length * 2 < full.length) {
        payload = ops;
        delta = 1;
      }
    }
    const n = chain.n + 1;
    const line = encodeLine({ t: "state", e: parts.epoch, n, d: delta }, payload);
    const offset = await parts.writer.append(line, true);
    const length = Buffer.byteLength(payload);
    const loc = { file: parts.writer.file, offset: offset + line.length - 1 - length, length };
    chain.n = n;
    if (delta === 0) {
      chain.full = loc;
      chain.deltas = [];
    } else chain.deltas.push(loc);
    parts.index.records++;
    this.cached = { n, value: JSON.parse(full) as JsonValue };
  }
}

/**
 * The latest state of `index`, rebuilt from its full state and deltas (undefined when none was stored). Every
 * reader and the holder come here, so a value that is no JSON, or a delta that is malformed or does not fit,
 * is CORRUPT_FILE naming the file and the byte where that value lies.
 */
export function stateOf(index: RunIndex, values: ValueFiles): JsonValue | undefined {
  const chain = index.state;
  if (chain.full === undefined) return undefined;
  const readJson = (loc: ValueLocation, what: string): unknown => {
    const r = values.read(loc);
    if (!r.ok) throw corrupt(loc.file, loc.offset, `a ${what} that cannot be read (${r.detail})`);
    try {
      return JSON.parse(r.text);
    } catch (error) {
      throw corrupt(loc.file, loc.offset, `a ${what} that is not JSON`, error);
    }
  };
  let value = readJson(chain.full, "state") as JsonValue;
  for (const d of chain.deltas) {
    const ops = readJson(d, "state delta");
    try {
      value = applyDelta(value, parseDelta(ops));
    } catch (error) {
      throw corrupt(d.file, d.offset, `a state delta that does not apply to the state before it (${(error as Error).message})`, error);
    }
  }
  return value;
}

/** The data of every event named `name` in `index`, oldest first (an event whose data cannot be read: null). */
export function eventsOf(index: RunIndex, values: ValueFiles, name: string): JsonValue[] {
  const out: JsonValue[] = [];
  for (const ev of index.events) {
    if (ev.name !== name) continue;
    const r = ev.data === undefined ? undefined : values.read(ev.data);
    out.push(r?.ok ? parseOrNull(r.text) : null);
  }
  return out;
}

// An event whose data is no JSON counts as unreadable, like one whose bytes cannot be read.
function parseOrNull(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return null;
  }
}
