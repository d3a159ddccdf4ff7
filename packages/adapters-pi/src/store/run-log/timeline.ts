/**
 * The run's state and event records in the order the history holds them, every state generation rebuilt: what
 * the journal is rendered from (docs/decisions.md D17). Values are read one at a time, as the walk reaches them.
 */
import type { JsonValue } from "../../io/plain-json.js";
import { corrupt } from "./format.js";
import type { RunIndex } from "./run-index.js";
import { eventValue, readStateValue } from "./state-keeper.js";
import type { ValueFiles } from "./values.js";

/** One record of the timeline: a state generation (the whole state) or an event (its data, null if unreadable). */
export type TimelineItem = { kind: "state"; n: number; epoch: number; value: JsonValue } | { kind: "event"; name: string; epoch: number; data: JsonValue };

/** Walks `index`'s states and events in history order. */
export function* timelineOf(index: RunIndex, values: ValueFiles): Generator<TimelineItem> {
  const { states, events } = index;
  let s = 0;
  let e = 0;
  let state: JsonValue | undefined;
  while (s < states.length || e < events.length) {
    const st = states[s];
    const ev = events[e];
    if (st !== undefined && (ev === undefined || st.pos < ev.pos)) {
      s++;
      if (st.d === 1 && state === undefined) throw corrupt(st.data.file, st.data.offset, "a state delta with no state before it");
      state = readStateValue(values, st.data, st.d === 0 ? undefined : state);
      yield { kind: "state", n: st.n, epoch: st.epoch, value: state };
    } else if (ev !== undefined) {
      e++;
      yield { kind: "event", name: ev.name, epoch: ev.epoch, data: eventValue(values, ev.data) };
    }
  }
}

/** How many state records and events named `event` the timeline holds, without reading any value. */
export function countTimeline(index: RunIndex, event: string): number {
  let n = index.states.length;
  for (const ev of index.events) if (ev.name === event) n++;
  return n;
}
