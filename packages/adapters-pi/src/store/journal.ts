/**
 * The run's append-only NDJSON journal (`<runDir>/journal.ndjson`): one fsynced line per state change, so that
 * the latest state can be rebuilt when workflow.json is lost. A torn last line (a crash mid-append) is expected
 * and ignored; an unreadable line anywhere else means the file was damaged and is reported.
 */
import { z } from "zod";
import { workflowError, type Result, type WorkflowError } from "@phasekit/core";
import { writeAll } from "../io/atomic-write.js";
import { nodeFs, type FsPort } from "../io/fs-port.js";
import { canonicalJson } from "../io/canonical-json.js";
import { MAX_FILE_BYTES, openRegular, readRegular } from "../io/safe-open.js";
import { parseJsonText } from "./metadata-parse.js";
import type { JsonValue } from "../io/plain-json.js";
import { applyDelta, diffJson, parseDelta } from "./run-log/state-delta.js";
import { validateMetadata } from "./metadata.js";
import type { WorkflowMetadata } from "./metadata-schema.js";

const SCOPE = "journal";

/** File name of the journal inside a run folder. */
export const JOURNAL_FILE = "journal.ndjson";
/** The event whose `data` is a full workflow.json snapshot; the store appends one on every metadata write. */
export const METADATA_EVENT = "metadata";
/**
 * The event of a metadata write stored as a delta `{ from, ops }` on the document of generation `from` (the
 * previous write), when that is much smaller than the document: a 10 KB state changing by 200 B per write costs
 * ~300 B per line instead of 10 KB. A full snapshot comes at least every `FULL_EVERY` writes.
 */
export const METADATA_DELTA_EVENT = "metadata-delta";
const FULL_EVERY = 256;
const DELTA_FROM_BYTES = 2048;

/** What a store remembers of its last journaled metadata, to write the next one as a delta. */
export interface JournaledMetadata {
  metadata: WorkflowMetadata;
  /** Deltas written since the last full snapshot. */
  sinceFull: number;
}

/**
 * The journal entry of the metadata write `next`: a delta on `previous` when `previous` is the generation just
 * before and the delta is less than half the document, else the whole document. Returns what to remember.
 */
export function metadataEntry(next: WorkflowMetadata, previous: JournaledMetadata | undefined): { entry: JournalAppend; journaled: JournaledMetadata } {
  const base = { generation: next.generation, at: next.updatedAt };
  // A small document stays whole (and is not diffed): its line is what people read, and a delta saves little.
  const whole = previous === undefined ? 0 : canonicalJson(next).length;
  if (previous !== undefined && whole >= DELTA_FROM_BYTES && previous.metadata.generation === next.generation - 1 && previous.sinceFull < FULL_EVERY) {
    const ops = diffJson(previous.metadata as unknown as JsonValue, next as unknown as JsonValue);
    const delta = { from: previous.metadata.generation, ops };
    if (canonicalJson(delta).length * 2 < whole) {
      return { entry: { ...base, event: METADATA_DELTA_EVENT, data: delta }, journaled: { metadata: next, sinceFull: previous.sinceFull + 1 } };
    }
  }
  return { entry: { ...base, event: METADATA_EVENT, data: next }, journaled: { metadata: next, sinceFull: 0 } };
}

/** One journal line. `seq` counts from 1 without gaps; `generation` is the metadata generation it belongs to. */
export const journalEntrySchema = z.strictObject({
  seq: z.int().min(1),
  generation: z.int().min(0),
  at: z.string().min(1),
  event: z.string().min(1).max(128),
  data: z.unknown().optional(),
});

/** A journal line. */
export type JournalEntry = z.infer<typeof journalEntrySchema>;
/** What a caller appends; the journal assigns `seq`. */
export type JournalAppend = Omit<JournalEntry, "seq">;

/** Outcome of reading a journal: the entries, and whether a torn last line was dropped. */
export type JournalReadResult = Result<{ entries: JournalEntry[]; torn: boolean; tornBytes: number }>;

/** Reads every entry; a missing file is an empty journal; a bad line before the last is CORRUPT_FILE naming it. */
export async function readJournal(file: string, options: { fs?: FsPort } = {}): Promise<JournalReadResult> {
  const fs = options.fs ?? nodeFs;
  try {
    return parseJournal(file, (await readBytes(fs, file)).toString("utf8"));
  } catch (error) {
    return { ok: false, error: error as WorkflowError };
  }
}

/** Parses journal text (see `readJournal`). */
export function parseJournal(file: string, text: string): JournalReadResult {
  const lines = text.split("\n");
  const last = lines.pop() ?? "";
  const entries: JournalEntry[] = [];
  for (let i = 0; i < lines.length; i++) {
    const entry = parseLine(file, lines[i] ?? "", i + 1, entries.length + 1);
    if (!entry.ok) return entry;
    entries.push(entry.entry);
  }
  if (last === "") return { ok: true, entries, torn: false, tornBytes: 0 };
  // No newline after the last line: the append was cut short. Complete JSON is kept, anything else dropped.
  const tail = parseLine(file, last, lines.length + 1, entries.length + 1);
  if (tail.ok) return { ok: true, entries: [...entries, tail.entry], torn: false, tornBytes: 0 };
  return { ok: true, entries, torn: true, tornBytes: Buffer.byteLength(last, "utf8") };
}

function parseLine(file: string, line: string, lineNo: number, seq: number): Result<{ entry: JournalEntry }> {
  const where = `${file}:${lineNo}`;
  const json = parseJsonText(where, line, SCOPE);
  if (!json.ok) return { ok: false, error: lineError(file, lineNo, json.error.message) };
  const r = journalEntrySchema.safeParse(json.value);
  if (!r.success) return { ok: false, error: lineError(file, lineNo, r.error.issues[0]?.message ?? "invalid entry") };
  if (r.data.seq !== seq) return { ok: false, error: lineError(file, lineNo, `seq ${r.data.seq} where ${seq} was expected`) };
  return { ok: true, entry: r.data };
}

function lineError(file: string, line: number, why: string): WorkflowError {
  return workflowError(SCOPE, "CORRUPT_FILE", `${file} line ${line} is damaged: ${why}. The file was left untouched.`, {
    file,
    line,
    hint: "only the last line may be torn; restore the journal from a copy or move it aside by hand",
  });
}

/** An open journal: appends are serialized within the process, each one write of a whole line + fsync. */
export interface JournalWriter {
  readonly file: string;
  /** Appends one entry and returns it with its `seq` once it is on disk. */
  append(entry: JournalAppend): Promise<JournalEntry>;
  close(): Promise<void>;
}

/**
 * Opens `file` for appending (creating it 0600). A torn last line is cut off first, since it was never
 * acknowledged and would otherwise glue itself to the next entry; a damaged middle line refuses to open.
 */
export async function openJournal(file: string, options: { fs?: FsPort } = {}): Promise<JournalWriter> {
  const fs = options.fs ?? nodeFs;
  const bytes = await readBytes(fs, file);
  const read = parseJournal(file, bytes.toString("utf8"));
  if (!read.ok) throw read.error;
  const opened = await openRegular(fs, file, "append", SCOPE);
  if (opened === null) throw workflowError(SCOPE, "WRITE_FAILED", `cannot open ${file} for appending.`, { file });
  const { handle } = opened;
  try {
    if (read.torn) await handle.truncate(bytes.lastIndexOf(0x0a) + 1);
    else if (bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a) await writeAll(handle, Buffer.from("\n"));
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw workflowError(SCOPE, "WRITE_FAILED", `cannot repair the torn tail of ${file}: ${String(error)}`, { file }, error);
  }
  let seq = read.entries.length;
  let size = read.torn ? bytes.lastIndexOf(0x0a) + 1 : (await handle.stat()).size;
  let queue: Promise<unknown> = Promise.resolve();
  let closed = false;
  const appendNow = async (entry: JournalAppend): Promise<JournalEntry> => {
    if (closed) throw workflowError(SCOPE, "WRITE_FAILED", `cannot append to ${file}: the journal is closed.`, { file });
    // Another process (the next lock holder) may have appended since: pick up its seq instead of reusing one.
    if ((await handle.stat()).size !== size) {
      const fresh = parseJournal(file, (await readBytes(fs, file)).toString("utf8"));
      if (!fresh.ok) throw fresh.error;
      if (fresh.torn) throw workflowError(SCOPE, "WRITE_FAILED", `${file} gained a torn line while open; reopen it.`, { file });
      seq = fresh.entries.length;
      size = (await handle.stat()).size;
    }
    const full = { ...stripUndefined(entry), seq: seq + 1 } as JournalEntry;
    const line = Buffer.from(`${canonicalJson(full)}\n`, "utf8");
    try {
      await writeAll(handle, line);
      await handle.sync();
    } catch (error) {
      // Half a line would glue itself to the next entry and make every later read CORRUPT_FILE: cut it back.
      const restored = await handle.truncate(size).then(() => true, () => false);
      throw workflowError(SCOPE, "WRITE_FAILED", `appending to ${file} failed: ${String(error)}`, { file, seq: full.seq, restored, hint: "free disk space, then retry" }, error);
    }
    seq = full.seq;
    size += line.length;
    return full;
  };
  return {
    file,
    append(entry) {
      const p = queue.then(() => appendNow(entry));
      queue = p.catch(() => undefined);
      return p;
    },
    async close() {
      if (closed) return;
      closed = true;
      await queue;
      await handle.close();
    },
  };
}

/** Opens, appends one entry, closes: for rare events; keep a `JournalWriter` for a stream of them. */
export async function appendJournalEntry(file: string, entry: JournalAppend, options: { fs?: FsPort } = {}): Promise<JournalEntry> {
  const writer = await openJournal(file, options);
  try {
    return await writer.append(entry);
  } finally {
    await writer.close();
  }
}

/**
 * The newest metadata document in the journal: the one of the highest generation, rebuilt from its last full
 * snapshot and the deltas after it (`null` if the journal holds none); a damaged snapshot or delta is
 * CORRUPT_FILE naming the line. Not the last line: a holder paused between its (acknowledged) metadata write and
 * its journal line appends that line after a newer holder's later generations, and the run log's
 * compare-and-set makes generations unique, so the highest one is the newest fact.
 */
export function rebuildFromJournal(entries: readonly JournalEntry[], file = JOURNAL_FILE): Result<{ metadata: WorkflowMetadata | null }> {
  const docs = new Map<number, { doc: JsonValue; seq: number }>();
  let newest: number | undefined;
  for (const entry of entries) {
    let doc: JsonValue | undefined;
    if (entry.event === METADATA_EVENT) doc = entry.data as JsonValue;
    else if (entry.event === METADATA_DELTA_EVENT) {
      const d = entry.data as { from?: unknown; ops?: unknown } | undefined;
      const base = typeof d?.from === "number" ? docs.get(d.from) : undefined;
      // A delta whose base is not in this journal (cut, or written by another store) rebuilds nothing.
      if (base === undefined) continue;
      try {
        doc = applyDelta(base.doc, parseDelta(d?.ops));
      } catch (error) {
        return { ok: false, error: workflowError(SCOPE, "CORRUPT_FILE", `${file} (seq ${entry.seq}): the metadata delta does not fit generation ${String(d?.from)}: ${String(error)}.`, { file, field: "data", hint: "the journal was edited or damaged; the run log still holds the metadata" }) };
      }
    } else continue;
    docs.set(entry.generation, { doc, seq: entry.seq });
    if (newest === undefined || entry.generation > newest) newest = entry.generation;
  }
  const found = newest === undefined ? undefined : docs.get(newest);
  if (found === undefined) return { ok: true, metadata: null };
  const r = validateMetadata(`${file} (seq ${found.seq})`, found.doc);
  return r.ok ? { ok: true, metadata: r.metadata } : r;
}

async function readBytes(fs: FsPort, file: string): Promise<Buffer> {
  return (await readRegular(fs, file, { maxBytes: MAX_FILE_BYTES.log, scope: SCOPE })) ?? Buffer.alloc(0);
}

function stripUndefined(entry: JournalAppend): JournalAppend {
  return entry.data === undefined ? { generation: entry.generation, at: entry.at, event: entry.event } : entry;
}
