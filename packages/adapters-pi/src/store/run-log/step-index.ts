/**
 * The steps of the index, parsed on demand. Opening a run of 10,000 steps must not parse 20,000 headers (that
 * was 100+ ms): the scan at open only finds each step line's key (its position in the header is fixed by our
 * own encoder) and keeps the header text; a lookup parses the one header it needs, once.
 */
import { corrupt, parseHeaderText, type DoneRecord, type FailRecord, type StartRecord } from "./format.js";
import type { StepEntry, ValueLocation } from "./entry-types.js";
import { payloadOf } from "./payload-of.js";

/** A step line seen at open and not parsed yet. */
interface LazyStep {
  lazy: true;
  file: string;
  epoch: number;
  offset: number;
  header: string;
  payload: ValueLocation | undefined;
}

/** Map-like view of the latest entry per step key. */
export class StepIndex {
  private readonly map = new Map<string, LazyStep | StepEntry>();

  get size(): number {
    return this.map.size;
  }

  /** The entry of `key`, parsing its header now if it was only scanned. */
  get(key: string): StepEntry | undefined {
    const v = this.map.get(key);
    if (v === undefined || !("lazy" in v)) return v;
    const entry = parseStep(key, v);
    this.map.set(key, entry);
    return entry;
  }

  set(key: string, entry: StepEntry): void {
    this.map.set(key, entry);
  }

  /** Records a scanned, unparsed step line (the latest one for its key wins). */
  setLazy(key: string, file: string, epoch: number, offset: number, header: string, payload: ValueLocation | undefined): void {
    this.map.set(key, { lazy: true, file, epoch, offset, header, payload });
  }

  keys(): IterableIterator<string> {
    return this.map.keys();
  }

  /** Every entry (parsing what is left: compaction and listings need them all). */
  *values(): IterableIterator<StepEntry> {
    for (const key of [...this.map.keys()]) yield this.get(key) as StepEntry;
  }
}

function parseStep(key: string, s: LazyStep): StepEntry {
  const r = parseHeaderText(s.file, s.header, s.offset);
  if ((r.t !== "start" && r.t !== "done" && r.t !== "fail") || r.k !== key || r.e !== s.epoch) {
    throw corrupt(s.file, s.offset, `a step line whose header does not match its key or epoch`);
  }
  const p = payloadOf(r);
  return entryOf(r, s.payload ?? (p === undefined ? undefined : { file: s.file, offset: p.offset, length: p.length }));
}

// One object shape for every entry (absent fields are undefined, not missing): differently shaped objects
// made every later access slower.
/** The index entry of a parsed step record. */
export function entryOf(r: StartRecord | DoneRecord | FailRecord, output: ValueLocation | undefined): StepEntry {
  const done = r.t === "done";
  return {
    key: r.k,
    status: done ? "completed" : r.t === "fail" ? "failed" : "started",
    epoch: r.e,
    inputFingerprint: r.in,
    attempt: r.a,
    outputFingerprint: done ? r.ofp : undefined,
    artifact: done ? r.art : undefined,
    output: done ? output : undefined,
    error: r.t === "fail" ? r.err : undefined,
    at: r.at,
    startedAt: r.t === "start" ? r.at : r.st,
  };
}
