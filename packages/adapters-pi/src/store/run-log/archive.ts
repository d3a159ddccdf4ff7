/**
 * A snapshot's archive (D17): the state and event records older than the run's latest full state, carried as one
 * value of segment-form lines (header, tab, payload), so that opening a run reads one header however many
 * metadata generations its journal keeps. It is read (once, then cached) only when the journal is rendered,
 * events are asked for, or a compaction copies it into the next snapshot.
 */
import { corrupt, decodeLines, type RunLogRecord } from "./format.js";
import type { LogParts } from "./log-parts.js";
import { inHistoryOrder, type EventEntry, type RunIndex, type StateRecordEntry } from "./run-index.js";
import type { LazyPayload, PlannedItem } from "./snapshot-layout.js";
import type { ValueFiles } from "./values.js";

const NONE = Object.freeze({ states: [] as StateRecordEntry[], events: [] as EventEntry[] });

/** The archived records of `index`, in history order (`pos` counts within the archive). */
export function archivedRecords(index: RunIndex, values: ValueFiles): { states: StateRecordEntry[]; events: EventEntry[] } {
  const a = index.archive;
  if (a === undefined) return NONE;
  if (a.decoded !== undefined) return a.decoded;
  const { file, offset, length } = a.loc;
  const r = values.readBytes(a.loc);
  if (!r.ok) throw corrupt(file, offset, `an archive that cannot be read (${r.detail})`);
  const decoded = decodeLines(file, r.bytes, 0, r.bytes.length, offset);
  if (decoded.validBytes !== offset + length) throw corrupt(file, decoded.validBytes, "an archive that ends inside a line");
  const states: StateRecordEntry[] = [];
  const events: EventEntry[] = [];
  let pos = 0;
  for (const line of decoded.lines) {
    const rec = line.record;
    const p = line.payload;
    const data = p === undefined ? undefined : { file, offset: p.offset, length: p.length };
    if (line.step === undefined && rec.t === "state" && data !== undefined) states.push({ n: rec.n, d: rec.d, epoch: rec.e, data, pos: pos++ });
    else if (line.step === undefined && rec.t === "event") events.push({ name: rec.name, epoch: rec.e, data, pos: pos++ });
    else throw corrupt(file, line.start, "an archive line that is not a state with its value or an event");
  }
  if (pos !== a.count) throw corrupt(file, offset, `an archive of ${pos} records where its header says ${a.count}`);
  a.decoded = { states, events };
  return a.decoded;
}

/**
 * What a compaction writes for the states and events of `parts`: one archive item holding the old archive and
 * every record before the latest full state, then the records from that state on, as lines of their own (the
 * state chain a claim reads, and the events after it). Values are read when the snapshot is written.
 */
export function timelineItems(parts: LogParts): PlannedItem[] {
  const { index, values } = parts;
  const { states, events } = index;
  // Before the latest full state: archived. From it on: kept as lines (what `state()` rebuilds from).
  let boundary = 0;
  for (const st of states) if (st.d === 0) boundary = st.pos;
  const chunks: Array<{ length: number; read: () => Buffer }> = [];
  let count = 0;
  if (index.archive !== undefined) {
    const old = index.archive;
    const checked = values.readBytes(old.loc);
    if (!checked.ok) throw corrupt(old.loc.file, old.loc.offset, `an archive that cannot be read (${checked.detail})`);
    chunks.push({ length: old.loc.length, read: () => reread(values, old.loc, "the archive") });
    count += old.count;
  }
  const kept: PlannedItem[] = [];
  for (const item of inHistoryOrder(states, events)) {
    const header: RunLogRecord = item.kind === "state" ? { t: "state", e: item.entry.epoch, n: item.entry.n, d: item.entry.d } : { t: "event", e: item.entry.epoch, name: item.entry.name };
    const what = item.kind === "state" ? `state ${item.entry.n}` : `event ${item.entry.name}`;
    const stored = item.entry.data;
    const readable = stored !== undefined && values.readBytes(stored).ok;
    // A state must be readable (the journal rebuilds every generation); an event whose value is gone is carried
    // without one, as before.
    if (stored !== undefined && !readable && item.kind === "state") throw corrupt(stored.file, stored.offset, `${what} cannot be read`);
    const loc = readable ? stored : undefined;
    if (item.entry.pos < boundary) {
      chunks.push(lineChunk(header, loc, values, what));
      count++;
    } else kept.push({ header, ...(loc === undefined ? {} : { payload: lazy(values, loc, what) }) });
  }
  if (count === 0) return kept;
  const length = chunks.reduce((n, c) => n + c.length, 0);
  const archive: LazyPayload = {
    length,
    read: () => {
      const bytes = Buffer.concat(chunks.map((c) => c.read()));
      if (bytes.length !== length) throw new Error(`compaction: the archive took ${bytes.length} bytes where ${length} were planned`);
      return bytes;
    },
  };
  return [{ header: { t: "arch", e: parts.epoch, n: count }, payload: archive }, ...kept];
}

function lineChunk(header: RunLogRecord, loc: { file: string; offset: number; length: number } | undefined, values: ValueFiles, what: string): { length: number; read: () => Buffer } {
  const head = Buffer.from(JSON.stringify(header), "utf8");
  if (loc === undefined) return { length: head.length + 1, read: () => Buffer.concat([head, NEWLINE]) };
  // The value's own bytes, as stored: a line of the segment form (header, tab, value, newline).
  return { length: head.length + 1 + loc.length + 1, read: () => Buffer.concat([head, TAB, reread(values, loc, what), NEWLINE]) };
}

const TAB = Buffer.from("\t");
const NEWLINE = Buffer.from("\n");

function lazy(values: ValueFiles, loc: { file: string; offset: number; length: number }, what: string): LazyPayload {
  return { length: loc.length, read: () => reread(values, loc, what) };
}

function reread(values: ValueFiles, loc: { file: string; offset: number; length: number }, what: string): Buffer {
  const again = values.readBytes(loc);
  if (!again.ok) throw new Error(`compaction: ${what} changed while it was copied (${again.detail})`);
  return again.bytes;
}
