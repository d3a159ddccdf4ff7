/**
 * Workflow states in the run log, stored so that the bytes grow with what changed: a state that differs from
 * the previous one by a small delta is stored as that delta; a full state every MAX_CHAIN deltas (or when the
 * delta is not much smaller) bounds the work of rebuilding it.
 */
import { encodeCanonical } from "../../io/canonical-json.js";
import type { JsonValue } from "../../io/plain-json.js";
import type { LogParts } from "./log-parts.js";
import { corrupt, encodeLine } from "./format.js";
import { applyDelta, parseDelta, smallDelta } from "./state-delta.js";
import { archivedRecords } from "./archive.js";
import { noteState, type EventEntry, type RunIndex, type ValueLocation } from "./run-index.js";
import type { ValueFiles } from "./values.js";
import type { RecordPlace } from "../../engine/commit-record.js";

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
      const ops = smallDelta(prev, state, full.length);
      if (ops !== undefined) {
        payload = ops;
        delta = 1;
      }
    }
    const n = chain.n + 1;
    const line = encodeLine({ t: "state", e: parts.epoch, n, d: delta }, payload);
    const offset = await parts.writer.append(line, true);
    const length = Buffer.byteLength(payload);
    noteState(parts.index, n, delta, parts.epoch, { file: parts.writer.file, offset: offset + line.length - 1 - length, length });
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
  let value = readStateValue(values, chain.full, undefined);
  for (const d of chain.deltas) value = readStateValue(values, d, value);
  return value;
}

/**
 * The state a state record holds: its full value (`previous` undefined), or its delta applied to `previous`.
 * A value that cannot be read, is no JSON, or does not fit is CORRUPT_FILE naming the file and byte.
 */
export function readStateValue(values: ValueFiles, loc: ValueLocation, previous: JsonValue | undefined): JsonValue {
  const what = previous === undefined ? "state" : "state delta";
  const r = values.read(loc);
  if (!r.ok) throw corrupt(loc.file, loc.offset, `a ${what} that cannot be read (${r.detail})`);
  let json: unknown;
  try {
    json = JSON.parse(r.text);
  } catch (error) {
    throw corrupt(loc.file, loc.offset, `a ${what} that is not JSON`, error);
  }
  if (previous === undefined) return json as JsonValue;
  try {
    return applyDelta(previous, parseDelta(json));
  } catch (error) {
    throw corrupt(loc.file, loc.offset, `a state delta that does not apply to the state before it (${(error as Error).message})`, error);
  }
}

/** The entries of every event named `name` in `index`, its archive's (archive.ts) first, oldest first. */
function* eventsNamed(index: RunIndex, values: ValueFiles, name: string): Generator<EventEntry> {
  for (const list of [archivedRecords(index, values).events, index.events]) for (const ev of list) if (ev.name === name) yield ev;
}

/** The data of every event named `name` in `index`, oldest first (an event whose data cannot be read: null). */
export function eventsOf(index: RunIndex, values: ValueFiles, name: string): JsonValue[] {
  return Array.from(eventsNamed(index, values, name), (ev) => eventValue(values, ev.data));
}

/** An event's data and lease with where it lies: its value's file and byte (its history position when it has no value). */
export interface PlacedEvent {
  epoch: number;
  data: JsonValue;
  file: string;
  place: RecordPlace;
}

/** `eventsOf`, each with its place, for readers that name a damaged record (engine/commit-record.ts); `dir`: the log's folder. */
export function placedEventsOf(index: RunIndex, values: ValueFiles, name: string, dir: string): PlacedEvent[] {
  return Array.from(eventsNamed(index, values, name), (ev) => placeEvent(values, ev, dir));
}

/** One event's `PlacedEvent` (the one reading of where an event lies, for every reader that reports damage). */
export function placeEvent(values: ValueFiles, ev: EventEntry, dir: string): PlacedEvent {
  const data = eventValue(values, ev.data);
  return ev.data === undefined ? { epoch: ev.epoch, data, file: dir, place: { entry: ev.pos } } : { epoch: ev.epoch, data, file: ev.data.file, place: { offset: ev.data.offset } };
}

/** An event's data; one whose bytes cannot be read or are no JSON is null. */
export function eventValue(values: ValueFiles, loc: ValueLocation | undefined): JsonValue {
  const r = loc === undefined ? undefined : values.read(loc);
  if (r?.ok !== true) return null;
  try {
    return JSON.parse(r.text) as JsonValue;
  } catch {
    return null;
  }
}
