/**
 * The in-memory index of a run, folded from its log once at open and kept current by every append: the latest
 * record of each step, where each value lies, and the state chain. A reuse hit is a map lookup plus one read of
 * the output's bytes; nothing else touches the disk.
 */
import { corrupt, type DecodedLine } from "./format.js";
import type { ValueLocation } from "./entry-types.js";
import { payloadOf } from "./payload-of.js";
import { entryOf, StepIndex, type BaseSteps } from "./step-index.js";

export type { StepEntry, ValueLocation } from "./entry-types.js";

/** The state chain: the latest full state and the deltas after it, in order. */
export interface StateChain {
  n: number;
  full: ValueLocation | undefined;
  deltas: ValueLocation[];
}

/**
 * One state record of the history, kept after compaction too: the journal is rendered from every generation
 * (docs/decisions.md D17). `d: 1` is a delta on the state record before it.
 */
export interface StateRecordEntry {
  n: number;
  d: 0 | 1;
  epoch: number;
  data: ValueLocation;
  /** Position among the run's state and event records (their order in the history). */
  pos: number;
}

/** One event record of the history. */
export interface EventEntry {
  name: string;
  epoch: number;
  data: ValueLocation | undefined;
  /** Position among the run's state and event records. */
  pos: number;
}

/** Where a snapshot's archive lies and how many records it holds; `decoded` once something read them. */
export interface Archive {
  loc: ValueLocation;
  count: number;
  decoded?: { states: StateRecordEntry[]; events: EventEntry[] };
}

/** Everything the run log knows, without the values themselves. */
export interface RunIndex {
  steps: StepIndex;
  state: StateChain;
  /** Every state record, oldest first. */
  states: StateRecordEntry[];
  events: EventEntry[];
  /** The next position of a state or event record. */
  nextPos: number;
  /** A snapshot's archive of the records before `states` and `events` (archive.ts), read only when needed. */
  archive: Archive | undefined;
  /** Records folded since the last base (what compaction would shrink). */
  records: number;
}

/** An empty index (a new run), or one whose steps start as `base` (a snapshot's). */
export function emptyIndex(base?: BaseSteps): RunIndex {
  return { steps: new StepIndex(base), state: { n: 0, full: undefined, deltas: [] }, states: [], events: [], nextPos: 0, archive: undefined, records: 0 };
}

/** Folds one decoded line of `file` into the index. Head, snap and base lines are the reader's business. */
export function applyLine(index: RunIndex, file: string, line: DecodedLine): void {
  const r = line.record;
  const p = line.payload ?? payloadOf(r);
  if (line.step !== undefined) {
    index.steps.setLazy(line.step.key, file, line.step.epoch, line.start, line.step.header, p === undefined ? undefined : { file, offset: p.offset, length: p.length });
    index.records++;
    return;
  }
  switch (r.t) {
    case "start":
    case "done":
    case "fail":
      index.steps.set(r.k, entryOf(r, p === undefined ? undefined : { file, offset: p.offset, length: p.length }));
      index.records++;
      return;
    case "state": {
      if (p === undefined) return;
      noteState(index, r.n, r.d, r.e, { file, offset: p.offset, length: p.length });
      index.records++;
      return;
    }
    case "event":
      index.events.push({ name: r.name, epoch: r.e, data: p === undefined ? undefined : { file, offset: p.offset, length: p.length }, pos: index.nextPos++ });
      index.records++;
      return;
    case "arch":
      // Not counted in `records`: archived records are kept history, not what a compaction would shrink.
      if (p === undefined || index.archive !== undefined) throw corrupt(file, line.start, "an archive line without a value, or a second one");
      index.archive = { loc: { file, offset: p.offset, length: p.length }, count: r.n };
      return;
    case "head":
    case "snap":
    case "base":
      return;
    default: {
      const never: never = r;
      return never;
    }
  }
}

/** Records a state record in the chain (for the latest state) and in the list of every generation. */
export function noteState(index: RunIndex, n: number, d: 0 | 1, epoch: number, loc: ValueLocation): void {
  index.state.n = n;
  if (d === 0) {
    index.state.full = loc;
    index.state.deltas = [];
  } else index.state.deltas.push(loc);
  index.states.push({ n, d, epoch, data: loc, pos: index.nextPos++ });
}

/** One state or event record of a history, for walks that take both in order. */
export type HistoryRecord = { kind: "state"; entry: StateRecordEntry } | { kind: "event"; entry: EventEntry };

/** The state and event records of one list pair, merged by their position (the order the history holds them). */
export function* inHistoryOrder(states: readonly StateRecordEntry[], events: readonly EventEntry[]): Generator<HistoryRecord> {
  let s = 0;
  let e = 0;
  while (s < states.length || e < events.length) {
    const st = states[s];
    const ev = events[e];
    if (st !== undefined && (ev === undefined || st.pos < ev.pos)) {
      s++;
      yield { kind: "state", entry: st };
    } else if (ev !== undefined) {
      e++;
      yield { kind: "event", entry: ev };
    }
  }
}
