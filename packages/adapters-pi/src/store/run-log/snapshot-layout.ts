/**
 * The bytes of a snapshot (layout 2). Opening a run must not cost time per live step, so the steps are an index
 * searched in place:
 *
 *   snap line   {"t":"snap","v":2,"e":…,"idx":I,"size":S,"n":N,"steps":A,"keys":K,"tab":T}
 *   [.., A)     the other records (state, events), one line each, in their order: read at open
 *   [A, K)      the N step lines (headers only, values located by `po`/`pl`), sorted by key (UTF-8 bytes)
 *   [K, T)      the N keys' UTF-8 bytes, concatenated in the same order
 *   [T, I)      the offset table: N + 1 pairs of u32 LE (line start, key start; the last pair is (K, T)), then
 *               N u32 LE giving the sorted position of each step in the order the run first recorded it
 *   [I, S)      the values
 *
 * Opening reads the snap line, the other records, the keys and the table; a lookup is a binary search over the
 * keys, then one read of that step's line. Offsets are absolute in the file.
 */
import { encodeLine, SNAPSHOT_VERSION, type RunLogRecord } from "./format.js";

/** One record of a snapshot and its value's canonical JSON, if it carries one. */
export interface SnapshotItem {
  header: RunLogRecord;
  payload?: string | Buffer;
}

/**
 * A value of the payload section, read only when its turn to be written comes (a compaction streams them).
 * `read` may return a buffer it reuses (valid until the next read) or text; `length` is its UTF-8 byte length.
 */
export interface LazyPayload {
  readonly length: number;
  read(): Buffer | string;
}

/** A snapshot record whose value (if any) is read when written. */
export interface PlannedItem {
  header: RunLogRecord;
  payload?: LazyPayload;
}

/** A chunk of a snapshot file: bytes, or a value still to read. */
export type SnapshotChunk = Buffer | LazyPayload;

/** Bytes of the offset table per step (a pair of u32 and an order u32), and of its closing pair. */
export const TABLE_ENTRY_BYTES = 12;
export const TABLE_END_BYTES = 8;

const isStep = (r: RunLogRecord): r is Extract<RunLogRecord, { k: string }> => r.t === "start" || r.t === "done" || r.t === "fail";

/** The snapshot file's bytes for `items`, written by `epoch`, as chunks to write in order (no copy of the values). */
export function layoutSnapshot(epoch: number, items: readonly SnapshotItem[]): Buffer[] {
  const planned = items.map((i): PlannedItem => {
    if (i.payload === undefined) return { header: i.header };
    const bytes = typeof i.payload === "string" ? Buffer.from(i.payload, "utf8") : i.payload;
    return { header: i.header, payload: { length: bytes.length, read: () => bytes } };
  });
  const { index, payloads } = planSnapshot(epoch, planned);
  return [index, ...payloads.map((p) => p.read() as Buffer)];
}

/**
 * The index section of a snapshot of `items` written by `epoch`, and the values to write after it, in order:
 * offsets need only each value's length, so a compaction holds one value at a time, not the whole history.
 * The values are laid out in the order of `items` (the lines are sorted, the values are not): an output delta
 * names its base by distance, and snapshot-outputs.ts chains each output on the one laid out just before it.
 */
export function planSnapshot(epoch: number, items: readonly PlannedItem[]): { index: Buffer; payloads: LazyPayload[] } {
  const others = items.filter((i) => !isStep(i.header));
  const steps = items.filter((i) => isStep(i.header)).map((item, order) => ({ item, order, key: Buffer.from((item.header as { k: string }).k, "utf8") }));
  // Insertion order is kept (listings show steps as the run recorded them); lookups use the sorted order.
  const sorted = [...steps].sort((a, b) => Buffer.compare(a.key, b.key));
  for (let i = 1; i < sorted.length; i++) if (Buffer.compare((sorted[i - 1] as { key: Buffer }).key, (sorted[i] as { key: Buffer }).key) === 0) throw new Error("snapshot: a step key appears twice");
  const ordered = [...others, ...sorted.map((s) => s.item)];
  // Where each value lies in the payload section, in the order of `items`.
  const within = new Map<PlannedItem, number>();
  let payloadBytes = 0;
  for (const item of items) {
    if (item.payload === undefined) continue;
    within.set(item, payloadBytes);
    payloadBytes += item.payload.length;
  }
  const keys = Buffer.concat(sorted.map((s) => s.key));
  const tableBytes = sorted.length * TABLE_ENTRY_BYTES + TABLE_END_BYTES;
  // Payload offsets are absolute, so the index's length depends on its own digits: iterate to the fixpoint.
  let idx = 0;
  let snapLength = 0;
  // Each header is encoded once; only the digits of `po` (and the snap line) change between rounds of the
  // fixpoint, so a round only adds up lengths. A compaction of 10,000 steps re-encoding every line each round
  // left ~30 MB of promoted garbage at its peak (peak RSS at close).
  const heads = ordered.map((item) => {
    const { po: _po, pl: _pl, ...header } = item.header as RunLogRecord & { po?: number; pl?: number };
    const text = JSON.stringify(header);
    return { text, bytes: Buffer.byteLength(text, "utf8"), payload: item.payload, within: within.get(item) ?? 0 };
  });
  const suffix = (po: number, pl: number): string => `,"po":${po},"pl":${pl}}\n`;
  const lineBytes = (h: (typeof heads)[number], at: number): number => (h.payload === undefined ? h.bytes + 1 : h.bytes - 1 + suffix(at + h.within, h.payload.length).length);
  for (;;) {
    let otherBytes = 0;
    let stepBytes = 0;
    heads.forEach((h, i) => {
      if (i < others.length) otherBytes += lineBytes(h, idx);
      else stepBytes += lineBytes(h, idx);
    });
    const A = snapLength + otherBytes;
    const K = A + stepBytes;
    const T = K + keys.length;
    const I = T + tableBytes;
    const snap = encodeLine({ t: "snap", v: SNAPSHOT_VERSION, e: epoch, idx: I, size: I + payloadBytes, n: sorted.length, steps: A, keys: K, tab: T });
    if (snap.length === snapLength && I === idx) {
      if (I > 0xffff_ffff) throw new Error("snapshot: an index section past 4 GiB");
      const index = Buffer.allocUnsafe(I);
      let at = snap.copy(index, 0);
      const stepLengths: number[] = [];
      heads.forEach((h, i) => {
        const start = at;
        at += index.write(h.text, at, "utf8");
        // `{…}` becomes `{…,"po":…,"pl":…}`: exactly what encoding the header with po/pl added gives.
        if (h.payload === undefined) at += index.write("\n", at, "latin1");
        else at += index.write(suffix(idx + h.within, h.payload.length), at - 1, "latin1") - 1;
        if (i >= others.length) stepLengths.push(at - start);
      });
      if (at !== K) throw new Error("snapshot: the lines did not take the bytes planned");
      at += keys.copy(index, at);
      offsetTable(stepLengths, sorted, A, K, T).copy(index, at);
      const present = items.flatMap((i) => (i.payload === undefined ? [] : [i.payload]));
      return { index, payloads: present };
    }
    snapLength = snap.length;
    idx = I;
  }
}

function offsetTable(stepLines: readonly number[], sorted: ReadonlyArray<{ key: Buffer; order: number }>, A: number, K: number, T: number): Buffer {
  const n = sorted.length;
  const table = Buffer.alloc(n * TABLE_ENTRY_BYTES + TABLE_END_BYTES);
  let line = A;
  let key = K;
  for (let i = 0; i < n; i++) {
    table.writeUInt32LE(line, i * 8);
    table.writeUInt32LE(key, i * 8 + 4);
    line += stepLines[i] as number;
    key += (sorted[i] as { key: Buffer }).key.length;
  }
  table.writeUInt32LE(K, n * 8);
  table.writeUInt32LE(T, n * 8 + 4);
  // The order part: the j-th step the run recorded sits at sorted position order[j].
  const byOrder = sorted.map((s, i) => ({ order: s.order, i })).sort((a, b) => a.order - b.order);
  byOrder.forEach((s, j) => table.writeUInt32LE(s.i, (n + 1) * 8 + j * 4));
  return table;
}

/**
 * `chunks` regrouped into writes of about 1 MiB (few system calls, and never one copy of everything); a lazy
 * value is read when its group is being filled and copied into the group at once. One group buffer is reused:
 * each yielded buffer is valid until the next one is asked for (write it first).
 */
export function* batches(chunks: readonly SnapshotChunk[], size = 1 << 20): Generator<Buffer> {
  let group: Buffer | undefined;
  let bytes = 0;
  for (const chunk of chunks) {
    const c = Buffer.isBuffer(chunk) ? chunk : chunk.read();
    const length = typeof c === "string" ? Buffer.byteLength(c, "utf8") : c.length;
    if (length !== chunk.length) throw new Error(`snapshot: a value of ${chunk.length} bytes read as ${length}`);
    if (bytes > 0 && bytes + length > size) {
      yield (group as Buffer).subarray(0, bytes);
      bytes = 0;
    }
    if (length >= size) {
      yield typeof c === "string" ? Buffer.from(c, "utf8") : c;
      continue;
    }
    group ??= Buffer.allocUnsafe(size);
    if (typeof c === "string") group.write(c, bytes, "utf8");
    else c.copy(group, bytes);
    bytes += length;
  }
  if (bytes > 0) yield (group as Buffer).subarray(0, bytes);
}
