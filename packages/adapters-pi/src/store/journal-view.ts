/**
 * The journal a run shows (`PlanStore.readJournal`, `phasekit journal`, the inspector), rendered from its
 * history (docs/decisions.md D17): one `metadata` entry per state generation (the whole document), and one entry
 * per event a holder journaled, in the order the history holds them. Nothing else records them: journal.ndjson
 * is no longer written. A run folder of an earlier version keeps its file, read first and never changed; the
 * generations its history repeats from that file are not shown twice.
 *
 * `seq` numbers an entry by its place: the earlier file's lines, then every state and event record of the history
 * (a generation the earlier file already showed, and an event that is not a journal entry such as a commit
 * intent, keep their numbers and are skipped), so it only grows, survives compaction, and is known at append
 * without reading any value: not even the archive's (a damaged archive never fails an append that succeeded).
 */
import path from "node:path";
import type { JsonValue } from "../io/plain-json.js";
import type { FsPort } from "../io/fs-port.js";
import { JOURNAL_FILE, journalEntrySchema, METADATA_DELTA_EVENT, METADATA_EVENT, readJournal, type JournalAppend, type JournalEntry, type JournalReadResult } from "./journal.js";
import type { TimelineItem } from "./run-log/timeline.js";

/** The history event a journaled entry is stored as (its data: the entry without `seq`). */
export const JOURNAL_EVENT = "journal";

/** What rendering needs of a history: held (RunLog) or read-only (RunLogView). */
export interface JournalSource {
  timeline(from?: number): Generator<TimelineItem>;
  timelineCount(): number;
}

/** The earlier format's journal file of a run, as far as rendering needs it. */
export interface LegacyJournal {
  entries: JournalEntry[];
  /** The highest generation its metadata lines reached (-1: none). */
  maxGeneration: number;
}

/** Reads the run's journal.ndjson left by an earlier version (empty when there is none). */
export async function readLegacyJournal(runDir: string, fs: FsPort): Promise<{ ok: true; legacy: LegacyJournal } | { ok: false; error: Extract<JournalReadResult, { ok: false }>["error"] }> {
  const r = await readJournal(path.join(runDir, JOURNAL_FILE), { fs });
  if (!r.ok) return r;
  let maxGeneration = -1;
  for (const e of r.entries) if ((e.event === METADATA_EVENT || e.event === METADATA_DELTA_EVENT) && e.generation > maxGeneration) maxGeneration = e.generation;
  return { ok: true, legacy: { entries: r.entries, maxGeneration } };
}

/** The journal of a run: its earlier file's entries, then its history's; only those past seq `after`, when given. */
export function renderJournal(legacy: LegacyJournal, history: JournalSource | null, after = 0): JournalEntry[] {
  const out = legacy.entries.filter((e) => e.seq > after);
  if (history === null) return out;
  // An entry's seq is its place, so the records up to `after` are passed over unread.
  const from = Math.max(0, after - legacy.entries.length);
  let seq = legacy.entries.length + from;
  for (const item of history.timeline(from)) {
    seq++;
    if (item.kind === "state") {
      const entry = metadataLine(seq, item.value, legacy.maxGeneration);
      if (entry !== undefined) out.push(entry);
    } else if (item.name === JOURNAL_EVENT) {
      const r = journalEntrySchema.safeParse({ ...(isObject(item.data) ? item.data : {}), seq });
      // An event whose data cannot be read is shown as such rather than dropped: its place is known.
      out.push(r.success ? r.data : { seq, generation: 0, at: "", event: "unreadable" });
    }
  }
  return out;
}

/** The `seq` of the entry `history` journaled last (call it right after the append). */
export function lastJournalSeq(legacy: LegacyJournal, history: JournalSource): number {
  return legacy.entries.length + history.timelineCount();
}

/** The history event's data for `entry` (undefined data left out). */
export function journalEventData(entry: JournalAppend): JsonValue {
  const { generation, at, event, data } = entry;
  return (data === undefined ? { generation, at, event } : { generation, at, event, data }) as JsonValue;
}

function metadataLine(seq: number, doc: JsonValue, shownUpTo: number): JournalEntry | undefined {
  if (!isObject(doc)) return undefined;
  const generation = doc.generation;
  if (typeof generation !== "number" || !Number.isInteger(generation) || generation < 0 || generation <= shownUpTo) return undefined;
  const at = typeof doc.updatedAt === "string" && doc.updatedAt !== "" ? doc.updatedAt : "-";
  return { seq, generation, at, event: METADATA_EVENT, data: doc };
}

function isObject(v: unknown): v is Record<string, JsonValue> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
