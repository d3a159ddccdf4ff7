/**
 * The bytes of a snapshot: an index section (the `snap` line, then one header per record, payload locations
 * as `po`/`pl`) followed by a payload section. Opening a run reads the index section only, so resuming a long
 * run does not read its outputs.
 */
import { encodeLine, RUN_LOG_VERSION, type RunLogRecord } from "./format.js";

/** One record of a snapshot and its value's canonical JSON, if it carries one. */
export interface SnapshotItem {
  header: RunLogRecord;
  payload?: string | Buffer;
}

/** The snapshot file's bytes for `items`, written by `epoch`, as chunks to write in order (no copy of the values). */
export function layoutSnapshot(epoch: number, items: readonly SnapshotItem[]): Buffer[] {
  const payloads: Array<Buffer | undefined> = items.map((i) => (i.payload === undefined ? undefined : typeof i.payload === "string" ? Buffer.from(i.payload, "utf8") : i.payload));
  const present: Buffer[] = [];
  for (const p of payloads) if (p !== undefined) present.push(p);
  const payloadBytes = payloads.reduce((n, p) => n + (p?.length ?? 0), 0);
  // Payload offsets are absolute, so the index's length depends on its own digits: iterate to the fixpoint.
  let idx = 0;
  for (;;) {
    const lines: Buffer[] = [];
    let at = idx;
    items.forEach((item, k) => {
      const p = payloads[k];
      lines.push(encodeLine(p === undefined ? item.header : ({ ...item.header, po: at, pl: p.length } as RunLogRecord)));
      at += p?.length ?? 0;
    });
    const rest = lines.reduce((n, l) => n + l.length, 0);
    const snap = encodeLine({ t: "snap", v: RUN_LOG_VERSION, e: epoch, idx, size: idx + payloadBytes });
    if (snap.length + rest === idx) return [Buffer.concat([snap, ...lines]), ...present];
    idx = snap.length + rest;
  }
}

/** `chunks` regrouped into writes of about 1 MiB (few system calls, and never one copy of everything). */
export function* batches(chunks: readonly Buffer[], size = 1 << 20): Generator<Buffer> {
  let group: Buffer[] = [];
  let bytes = 0;
  for (const c of chunks) {
    group.push(c);
    bytes += c.length;
    if (bytes >= size) {
      yield group.length === 1 ? (group[0] as Buffer) : Buffer.concat(group, bytes);
      group = [];
      bytes = 0;
    }
  }
  if (group.length > 0) yield group.length === 1 ? (group[0] as Buffer) : Buffer.concat(group, bytes);
}
