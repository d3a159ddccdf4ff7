/**
 * The run's state and event records in the order the history holds them, every state generation rebuilt: what
 * the journal is rendered from (docs/decisions.md D17). Values are read one at a time, as the walk reaches them.
 */
import type { JsonValue } from "../../io/plain-json.js";
import { corrupt } from "./format.js";
import { inHistoryOrder, type EventEntry, type RunIndex, type StateRecordEntry } from "./run-index.js";
import { archivedRecords } from "./archive.js";
import { eventValue, readStateValue } from "./state-keeper.js";
import type { ValueFiles } from "./values.js";

/** One record of the timeline: a state generation (the whole state) or an event (its data, null if unreadable). */
export type TimelineItem = { kind: "state"; n: number; epoch: number; value: JsonValue } | { kind: "event"; name: string; epoch: number; data: JsonValue };

/** Walks `index`'s states and events in history order: its archive (archive.ts) first, then the rest. */
export function* timelineOf(index: RunIndex, values: ValueFiles): Generator<TimelineItem> {
  const archived = archivedRecords(index, values);
  const state: { value: JsonValue | undefined } = { value: undefined };
  yield* walk(archived.states, archived.events, values, state);
  yield* walk(index.states, index.events, values, state);
}

function* walk(states: readonly StateRecordEntry[], events: readonly EventEntry[], values: ValueFiles, state: { value: JsonValue | undefined }): Generator<TimelineItem> {
  for (const r of inHistoryOrder(states, events)) {
    if (r.kind === "event") {
      yield { kind: "event", name: r.entry.name, epoch: r.entry.epoch, data: eventValue(values, r.entry.data) };
      continue;
    }
    const st = r.entry;
    if (st.d === 1 && state.value === undefined) throw corrupt(st.data.file, st.data.offset, "a state delta with no state before it");
    state.value = readStateValue(values, st.data, st.d === 0 ? undefined : state.value);
    yield { kind: "state", n: st.n, epoch: st.epoch, value: state.value };
  }
}

/** How many state and event records the history holds, the archived ones included (nothing is read). */
export function countTimeline(index: RunIndex): number {
  return (index.archive?.count ?? 0) + index.states.length + index.events.length;
}
