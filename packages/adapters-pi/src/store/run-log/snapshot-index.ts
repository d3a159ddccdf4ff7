/**
 * The steps of a layout-2 snapshot (snapshot-layout.ts), searched in place. Opening reads the keys and the
 * offset table (a few bytes per step, no parsing) and checks the table; a lookup is a binary search over the
 * keys and one read of the step's line, parsed then. Nothing at open is per-step work beyond checking the table.
 */
import { corrupt, parseHeaderText, type SnapRecord } from "./format.js";
import type { StepEntry } from "./entry-types.js";
import { payloadOf } from "./payload-of.js";
import { readAt } from "../../io/safe-open-sync.js";
import { TABLE_END_BYTES, TABLE_ENTRY_BYTES } from "./snapshot-layout.js";
import { entryOf, type BaseSteps } from "./step-index.js";
import type { ValueFiles } from "./values.js";

/** Step lines are read in groups of this many (about 35 KB): one read serves the next lookups nearby. */
const GROUP = 128;

/** A layout-2 snapshot header: every section offset is present. */
export type SnapV2 = Required<SnapRecord>;

/** The sorted steps of one snapshot file. */
export class SnapshotSteps implements BaseSteps {
  readonly count: number;
  /** Absolute offsets: line i is [lines[i], lines[i+1]), key i is [keys[i], keys[i+1]). */
  private readonly lines: Uint32Array;
  private readonly keyStarts: Uint32Array;
  /** The bytes of the keys and the table (the keys are searched in place). */
  private readonly tail: Buffer;
  private order: number[] | undefined;
  private readonly groups = new Map<number, Buffer>();

  /** Reads and checks the keys and offset table of `snap` from `fd` (CORRUPT_FILE naming the table offset). */
  constructor(
    private readonly file: string,
    fd: number,
    private readonly snap: SnapV2,
    private readonly values: ValueFiles,
  ) {
    const { n, steps: A, keys: K, tab: T, idx: I } = snap;
    this.count = n;
    if (T + n * TABLE_ENTRY_BYTES + TABLE_END_BYTES !== I || !(A <= K && K <= T)) {
      throw corrupt(file, T, `an offset table that does not fit its header (${n} steps, sections ${A}/${K}/${T}/${I})`);
    }
    this.tail = readAt(fd, K, I - K);
    if (this.tail.length !== I - K) throw corrupt(file, K + this.tail.length, "a cut offset table");
    const tab = this.tail.subarray(T - K);
    this.lines = new Uint32Array(n + 1);
    this.keyStarts = new Uint32Array(n + 1);
    for (let i = 0; i <= n; i++) {
      const line = tab.readUInt32LE(i * 8);
      const key = tab.readUInt32LE(i * 8 + 4);
      const ok =
        i === 0
          ? line === A && key === K
          : line > (this.lines[i - 1] as number) && key > (this.keyStarts[i - 1] as number) && (i < n || (line === K && key === T));
      this.lines[i] = line;
      this.keyStarts[i] = key;
      if (!ok || line > K || key > T) throw corrupt(file, T + i * 8, `an offset table entry (${line}, ${key}) out of order or out of its section`);
      if (i >= 2 && !this.keyBefore(i - 2, i - 1)) throw corrupt(file, T + (i - 1) * 8, "step keys that are not in strictly ascending order");
    }
  }

  /** Sorted position of `key`, or -1. */
  find(key: string): number {
    const q = Buffer.from(key, "utf8");
    const base = this.snap.keys;
    let lo = 0;
    let hi = this.count - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const c = this.tail.compare(q, 0, q.length, (this.keyStarts[mid] as number) - base, (this.keyStarts[mid + 1] as number) - base);
      if (c === 0) return mid;
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  keyAt(i: number): string {
    const base = this.snap.keys;
    return this.tail.toString("utf8", (this.keyStarts[i] as number) - base, (this.keyStarts[i + 1] as number) - base);
  }

  /** The entry of the step at sorted position `i`, read and parsed now. */
  entryAt(i: number): StepEntry {
    const start = this.lines[i] as number;
    const length = (this.lines[i + 1] as number) - start;
    const group = this.groupOf(i);
    const from = start - (this.lines[i - (i % GROUP)] as number);
    if (group.indexOf(0x0a, from) !== from + length - 1) throw corrupt(this.file, start, "a step line that does not end where the offset table says");
    const rec = parseHeaderText(this.file, group.toString("utf8", from, from + length - 1), start);
    if ((rec.t !== "start" && rec.t !== "done" && rec.t !== "fail") || rec.k !== this.keyAt(i)) {
      throw corrupt(this.file, start, "a step line whose key is not the one its offset table entry names");
    }
    const p = payloadOf(rec);
    return entryOf(rec, p === undefined ? undefined : { file: this.file, offset: p.offset, length: p.length });
  }

  /** The lines of the group of steps holding position `i`, read once (a resume that reuses every step reads each once). */
  private groupOf(i: number): Buffer {
    const g = (i / GROUP) | 0;
    const known = this.groups.get(g);
    if (known !== undefined) return known;
    const start = this.lines[g * GROUP] as number;
    const end = this.lines[Math.min((g + 1) * GROUP, this.count)] as number;
    const r = this.values.readBytes({ file: this.file, offset: start, length: end - start });
    if (!r.ok) throw corrupt(this.file, start, `step lines that cannot be read (${r.detail})`);
    this.groups.set(g, r.bytes);
    return r.bytes;
  }

  /** Sorted positions in the order the run first recorded the steps (checked to be a permutation). */
  inOrder(): readonly number[] {
    if (this.order !== undefined) return this.order;
    const n = this.count;
    const at = this.snap.tab - this.snap.keys + (n + 1) * 8;
    const seen = new Uint8Array(n);
    const order = new Array<number>(n);
    for (let j = 0; j < n; j++) {
      const i = this.tail.readUInt32LE(at + j * 4);
      if (i >= n || seen[i] === 1) throw corrupt(this.file, this.snap.tab + (n + 1) * 8 + j * 4, `an order entry ${i} that is not a step position or repeats one`);
      seen[i] = 1;
      order[j] = i;
    }
    this.order = order;
    return order;
  }

  /** True when key `a` sorts strictly before key `b` (UTF-8 bytes). */
  private keyBefore(a: number, b: number): boolean {
    const base = this.snap.keys;
    const t = this.tail;
    const a0 = (this.keyStarts[a] as number) - base;
    const a1 = (this.keyStarts[a + 1] as number) - base;
    const b0 = (this.keyStarts[b] as number) - base;
    const b1 = (this.keyStarts[b + 1] as number) - base;
    const m = Math.min(a1 - a0, b1 - b0);
    for (let k = 0; k < m; k++) {
      const x = t[a0 + k] as number;
      const y = t[b0 + k] as number;
      if (x !== y) return x < y;
    }
    return a1 - a0 < b1 - b0;
  }
}
