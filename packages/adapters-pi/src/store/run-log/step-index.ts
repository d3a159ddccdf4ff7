/**
 * The steps of the index, parsed on demand. Opening a run of 10,000 steps must not parse 20,000 headers (that
 * was 100+ ms): the steps of a snapshot stay on disk, sorted, and are searched in place (snapshot-index.ts);
 * the segment lines after it are scanned only for their keys and kept as text, and they win over the snapshot.
 * A lookup parses the one header it needs, once.
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

/** Steps searched where they lie (a snapshot's sorted section): positions 0..count-1. */
export interface BaseSteps {
  readonly count: number;
  /** The position of `key`, or -1. */
  find(key: string): number;
  keyAt(i: number): string;
  entryAt(i: number): StepEntry;
  /** Positions in the order the run first recorded the steps. */
  inOrder(): readonly number[];
}

/** Map-like view of the latest entry per step key: an overlay (entries seen or made since `base`) over `base`. */
export class StepIndex {
  private readonly map = new Map<string, LazyStep | StepEntry>();
  /** Keys of the overlay that `base` holds too. */
  private shadowed = 0;

  constructor(private readonly base?: BaseSteps) {}

  get size(): number {
    return (this.base?.count ?? 0) + this.map.size - this.shadowed;
  }

  /** The entry of `key`, parsing its header now if it was only scanned. */
  get(key: string): StepEntry | undefined {
    const v = this.map.get(key);
    if (v === undefined) {
      const i = this.base === undefined ? -1 : this.base.find(key);
      if (i < 0) return undefined;
      const entry = (this.base as BaseSteps).entryAt(i);
      this.map.set(key, entry);
      this.shadowed++;
      return entry;
    }
    if (!("lazy" in v)) return v;
    const entry = parseStep(key, v);
    this.map.set(key, entry);
    return entry;
  }

  set(key: string, entry: StepEntry): void {
    this.shadow(key);
    this.map.set(key, entry);
  }

  /** Records a scanned, unparsed step line (the latest one for its key wins). */
  setLazy(key: string, file: string, epoch: number, offset: number, header: string, payload: ValueLocation | undefined): void {
    this.shadow(key);
    this.map.set(key, { lazy: true, file, epoch, offset, header, payload });
  }

  /** Every key, in the order the run first recorded it (the base's, then the overlay's new ones). */
  *keys(): IterableIterator<string> {
    const base = this.base;
    if (base !== undefined) for (const i of base.inOrder()) yield base.keyAt(i);
    for (const key of this.map.keys()) if (base === undefined || base.find(key) < 0) yield key;
  }

  /** Every entry (parsing what is left: compaction and listings need them all). */
  *values(): IterableIterator<StepEntry> {
    for (const key of [...this.keys()]) yield this.get(key) as StepEntry;
  }

  private shadow(key: string): void {
    if (this.base !== undefined && !this.map.has(key) && this.base.find(key) >= 0) this.shadowed++;
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
    // Always the same shape of location for an output (delta or not), for the reason above.
    output: done && output !== undefined ? { file: output.file, offset: output.offset, length: output.length, delta: r.d === 1 } : undefined,
    error: r.t === "fail" ? r.err : undefined,
    at: r.at,
    startedAt: r.t === "start" ? r.at : r.st,
  };
}
