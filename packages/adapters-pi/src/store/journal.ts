/**
 * Journal entries, and the journal file earlier versions wrote (`<runDir>/journal.ndjson`, one line per entry).
 * This version writes no such file: a run's journal is rendered from its history (journal-view.ts, D17); the
 * file of an earlier version is still read. A torn last line (a crash mid-append) is expected and ignored; an
 * unreadable line anywhere else means the file was damaged and is reported.
 */
import { z } from "zod";
import { workflowError, type Result, type WorkflowError } from "@phasekit/core";
import { nodeFs, type FsPort } from "../io/fs-port.js";
import { MAX_FILE_BYTES, readRegular } from "../io/safe-open.js";
import { parseJsonText } from "./metadata-parse.js";
import type { JsonValue } from "../io/plain-json.js";
import { applyDelta, parseDelta } from "./run-log/state-delta.js";
import { validateMetadata } from "./metadata.js";
import { firstIssue, schemaIssue } from "../engine/record-issue.js";
import type { WorkflowMetadata } from "./metadata-schema.js";

const SCOPE = "journal";

/** File name of the journal inside a run folder. */
export const JOURNAL_FILE = "journal.ndjson";
/** The event whose `data` is a full workflow.json document: one per metadata generation. */
export const METADATA_EVENT = "metadata";
/** In the file of an earlier version: a metadata generation as a delta `{ from, ops }` on generation `from`. */
export const METADATA_DELTA_EVENT = "metadata-delta";
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

/**
 * Options of `PlanStore.readJournal`. `after`: only the entries whose `seq` is above it (the last seq a reader
 * saw). An entry's seq never changes and only grows, so a follower asks for what is new, never the whole
 * journal again: every generation's document is read and sent once, not once per look.
 */
export interface JournalReadOptions {
  after?: number | undefined;
}

/** The position `options` asks to read after (0: from the start); INVALID_OPTIONS (thrown) for anything but a whole number ≥ 0. */
export function journalAfter(options: JournalReadOptions | undefined): number {
  const after = options?.after ?? 0;
  if (Number.isSafeInteger(after) && after >= 0) return after;
  throw workflowError(SCOPE, "INVALID_OPTIONS", `readJournal: after must be a whole number ≥ 0 (the last seq read), not ${String(after)}.`, {
    field: "after",
    value: after,
    hint: "pass the seq of the last entry read, or leave it out to read from the start",
  });
}

/**
 * The one check of an entry a caller appends, for every store: the journal's schema (seq left to the store) and
 * the events only `writeMetadata` writes. INVALID_OPTIONS naming the run, the field and its value otherwise.
 */
export function checkJournalAppend(slug: string, entry: unknown): Result<{ entry: JournalAppend }> {
  const event = (entry as { event?: unknown } | null)?.event;
  if (event === METADATA_EVENT || event === METADATA_DELTA_EVENT) {
    return {
      ok: false,
      error: workflowError("store", "INVALID_OPTIONS", `run ${slug}: the journal event "${event}" is written only by writeMetadata.`, {
        field: "event",
        value: event,
        hint: "name the event after what happened, e.g. step-reused",
      }),
    };
  }
  const checked = journalEntrySchema.omit({ seq: true }).safeParse(entry);
  if (checked.success) return { ok: true, entry: checked.data };
  const issue = firstIssue(entry, checked.error);
  return {
    ok: false,
    error: workflowError("store", "INVALID_OPTIONS", `run ${slug}: the journal entry is invalid: ${issue.text}.`, {
      field: issue.field,
      value: issue.value,
      hint: "pass { generation, at, event, data? } with a non-empty event name of at most 128 characters",
    }),
  };
}

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
  if (!r.success) return { ok: false, error: lineError(file, lineNo, schemaIssue(r.error, json.value).text) };
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

