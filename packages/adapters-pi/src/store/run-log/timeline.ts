/**
 * The run's state and event records in the order the history holds them, every state generation rebuilt: what
 * the journal is rendered from (docs/decisions.md D17). Values are read one at a time, as the walk reaches them.
 *
 * A walk may start at a position (`from`: how many records to pass over), as a follower asks for what is new:
 * the records passed over are not read, except the states a delta after `from` is built on (at most the chain
 * since the latest full state, MAX_CHAIN deltas), and a snapshot's archive is not even decoded when everything
 * from `from` on lies after it.
 */
import type { JsonValue } from "../../io/plain-json.js";
import { corrupt } from "./format.js";
import { inHistoryOrder, type EventEntry, type RunIndex, type StateRecordEntry, type ValueLocation } from "./run-index.js";
import { archivedRecords } from "./archive.js";
import { eventValue, readStateValue } from "./state-keeper.js";
import type { ValueFiles } from "./values.js";

/** One record of the timeline: a state generation (the whole state) or an event (its data, null if unreadable). */
export type TimelineItem = { kind: "state"; n: number; epoch: number; value: JsonValue } | { kind: "event"; name: string; epoch: number; data: JsonValue };

/** The state as far as the walk went: the value built so far, and the records after it not read yet. */
interface Chain {
  value: JsonValue | undefined;
  unread: Array<{ d: 0 | 1; loc: ValueLocation }>;
}

/** Walks `index`'s states and events in history order from position `from`: its archive (archive.ts) first, then the rest. */
export function* timelineOf(index: RunIndex, values: ValueFiles, from = 0): Generator<TimelineItem> {
  const archivedCount = index.archive?.count ?? 0;
  const chain: Chain = { value: undefined, unread: [] };
  // What lies after the archive starts with a full state (compaction archives what is before it), so the
  // archive is needed only for its own records or for a delta that would build on them.
  const first = index.states[0];
  if (from < archivedCount || (first !== undefined && first.d === 1)) {
    const archived = archivedRecords(index, values);
    yield* walk(archived.states, archived.events, values, chain, 0, from);
  }
  yield* walk(index.states, index.events, values, chain, archivedCount, from);
}

function* walk(states: readonly StateRecordEntry[], events: readonly EventEntry[], values: ValueFiles, chain: Chain, start: number, from: number): Generator<TimelineItem> {
  let pos = start;
  for (const r of inHistoryOrder(states, events)) {
    const here = pos++;
    if (r.kind === "event") {
      if (here >= from) yield { kind: "event", name: r.entry.name, epoch: r.entry.epoch, data: eventValue(values, r.entry.data) };
      continue;
    }
    const st = r.entry;
    if (st.d === 0) {
      chain.value = undefined;
      chain.unread = [];
    }
    chain.unread.push({ d: st.d, loc: st.data });
    if (here < from) continue;
    yield { kind: "state", n: st.n, epoch: st.epoch, value: built(values, chain) };
  }
}

// The state of the last record in `chain.unread`: its full state and the deltas after it, read now.
function built(values: ValueFiles, chain: Chain): JsonValue {
  for (const { d, loc } of chain.unread) {
    if (d === 1 && chain.value === undefined) throw corrupt(loc.file, loc.offset, "a state delta with no state before it");
    chain.value = readStateValue(values, loc, d === 0 ? undefined : chain.value);
  }
  chain.unread = [];
  return chain.value as JsonValue;
}

/** How many state and event records the history holds, the archived ones included (nothing is read). */
export function countTimeline(index: RunIndex): number {
  return (index.archive?.count ?? 0) + index.states.length + index.events.length;
}
