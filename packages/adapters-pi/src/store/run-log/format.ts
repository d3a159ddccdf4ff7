/**
 * The bytes of the run log. One line per record: a small JSON header, then, for records that carry a value
 * (a step output, a state, an event's data), a tab and the value's canonical JSON. JSON text never holds a raw
 * tab or newline, so opening a run parses only the headers and remembers where each value lies: outputs are
 * read when used, not at open.
 *
 * Files (all inside `<runDir>/runlog/`): `<epoch>.seg` is the segment of one lock acquisition (its first line,
 * the `head`, pins how much of the earlier segments that holder accepted); `snap-<epoch>-<n>.ndjson` is a
 * compaction's snapshot, in the same line format.
 */
import { isArtifactPath } from "./file-names.js";
import { workflowError, type WorkflowError } from "@phasekit/core";

/** Folder of the run log inside a run folder. */
export const RUN_LOG_DIR = "runlog";
/** The format version of segments (and of snapshots of the first layout, still read). */
export const RUN_LOG_VERSION = 1;
/** The snapshot layout this code writes: step lines sorted by key, with a key block and an offset table. */
export const SNAPSHOT_VERSION = 2;

/** A range of an earlier segment the holder of a newer one accepted: `[epoch, fromByte, toByte)`. */
export type Pin = [epoch: number, from: number, to: number];

/** First line of a segment. `base` is the snapshot the accepted history starts from (null: the empty run). */
export interface HeadRecord {
  t: "head";
  v: number;
  e: number;
  base: string | null;
  pins: Pin[];
}
/** A step began (never synced on its own: it only tells the next run that `fn` may have run). */
export interface StartRecord {
  t: "start";
  e: number;
  k: string;
  in: string;
  a: number;
  /** When the record was made (epoch ms, the runner's clock). */
  at?: number;
}
/** A step completed; the output is inline (the payload) or, when `art` is set, in that artifact file. */
export interface DoneRecord {
  t: "done";
  e: number;
  k: string;
  in: string;
  a: number;
  ofp: string;
  art?: string;
  /** The inline output is a delta on an earlier output of the same file (output-delta.ts). */
  d?: 1;
  at?: number;
  /** When the attempt started (epoch ms). */
  st?: number;
  /** In a snapshot's index section: where the output lies in its payload section (absolute offset, length). */
  po?: number;
  pl?: number;
}
/** A step failed. */
export interface FailRecord {
  t: "fail";
  e: number;
  k: string;
  in: string;
  a: number;
  err: string;
  at?: number;
  st?: number;
}
/** A workflow state: the payload is the full state (`d: 0`) or a delta on the previous one (`d: 1`). */
export interface StateRecord {
  t: "state";
  e: number;
  n: number;
  d: 0 | 1;
  po?: number;
  pl?: number;
}
/** A control or lifecycle event; the payload is its data. */
export interface EventRecord {
  t: "event";
  e: number;
  name: string;
  po?: number;
  pl?: number;
}
/**
 * In a snapshot only: the run's older state and event records (D17), `n` of them, kept as one value of lines in
 * the segment form (header, tab, payload): opening a run reads this one header, not a line per generation.
 */
export interface ArchRecord {
  t: "arch";
  e: number;
  n: number;
  po?: number;
  pl?: number;
}
/** A compaction: from here on, history starts at the snapshot `snap`. */
export interface BaseRecord {
  t: "base";
  e: number;
  snap: string;
}
/** First line of a snapshot file. */
export interface SnapRecord {
  t: "snap";
  v: number;
  e: number;
  /**
   * Bytes of the index section (this line and the headers, no payloads) and of the whole file: opening reads
   * only the index; values are read from the payload section when used.
   */
  idx: number;
  size: number;
  /**
   * Layout 2 (snapshot-layout.ts): `n` step lines sorted by key start at `steps`, their keys at `keys`, the
   * offset table at `tab`; the lines before `steps` (state, events) are read at open, the step lines on demand.
   */
  n?: number;
  steps?: number;
  keys?: number;
  tab?: number;
}

/** Every record of the run log. */
export type RunLogRecord = HeadRecord | StartRecord | DoneRecord | FailRecord | StateRecord | EventRecord | ArchRecord | BaseRecord | SnapRecord;

/** One line's bytes: the header JSON, and a tab plus the payload when there is one. */
export function encodeLine(header: RunLogRecord, payload?: string): Buffer {
  const head = JSON.stringify(header);
  return Buffer.from(payload === undefined ? `${head}\n` : `${head}\t${payload}\n`, "utf8");
}

/** A step line found by the scan at open: its key and epoch, and its header text, parsed only when used. */
export interface ScannedStep {
  key: string;
  epoch: number;
  header: string;
}

/**
 * A decoded line: its header (or, for a step line, only what the scan found) and where its payload lies in the
 * file (absolute byte offsets).
 */
export interface DecodedLine {
  /** The parsed header; for a step line it is parsed lazily, and this is a stand-in with `t` and `e` only. */
  record: RunLogRecord;
  step?: ScannedStep;
  /** Offset of the line's first byte, and of the byte after its newline. */
  start: number;
  end: number;
  payload?: { offset: number; length: number };
}

/** Result of splitting a file into lines: the complete ones, and where the torn tail (if any) starts. */
export interface DecodedFile {
  lines: DecodedLine[];
  /** Bytes of complete lines; anything after is a torn tail (a write cut by a crash). */
  validBytes: number;
}

const NEWLINE = 0x0a;
const TAB = 0x09;

/**
 * Splits `bytes[from, to)` into lines (offsets reported relative to the file, given that `bytes[0]` is file
 * offset `at`). A complete line that does not decode is CORRUPT_FILE naming the file and offset: only the last,
 * unterminated line can be torn by a crash. A zero byte where a line starts ends the lines too: our encoder never
 * writes one, so it is a segment's room not yet written into (segment-file.ts), and what follows it was never
 * acknowledged, whatever it holds (a power cut that kept a later page of a record but not its first; a reader
 * overtaken by the holder's write). Callers that know where the lines must end (a pinned range, a snapshot)
 * still report damage there.
 */
export function decodeLines(file: string, bytes: Buffer, from = 0, to = bytes.length, at = 0): DecodedFile {
  const lines: DecodedLine[] = [];
  let pos = from;
  while (pos < to && bytes[pos] !== 0) {
    const nl = bytes.indexOf(NEWLINE, pos);
    if (nl === -1 || nl >= to) break;
    // Search only inside this line: a line without a payload must not scan on to the end of the file.
    const inLine = bytes.subarray(pos, nl).indexOf(TAB);
    const tab = inLine === -1 ? -1 : pos + inLine;
    const headEnd = tab !== -1 && tab < nl ? tab : nl;
    const text = bytes.toString("utf8", pos, headEnd);
    const step = scanStep(text);
    const line: DecodedLine =
      step === undefined
        ? { record: parseHeaderText(file, text, at + pos), start: at + pos, end: at + nl + 1 }
        : { record: { t: "start", e: step.epoch, k: step.key, in: "", a: 0 }, step, start: at + pos, end: at + nl + 1 };
    if (headEnd === tab) line.payload = { offset: at + tab + 1, length: nl - tab - 1 };
    lines.push(line);
    pos = nl + 1;
  }
  return { lines, validBytes: at + pos };
}

// Our encoder writes step headers as {"t":…,"e":…,"k":…,…}: the key is found without parsing the rest.
const STEP_HEAD = /^\{"t":"(?:start|done|fail)","e":(\d{1,15}),"k":"((?:[^"\\]|\\.)*)"/;

function scanStep(text: string): ScannedStep | undefined {
  const m = STEP_HEAD.exec(text);
  if (m === null) return undefined;
  const raw = m[2] as string;
  let key: string;
  try {
    key = raw.includes("\\") ? (JSON.parse(`"${raw}"`) as string) : raw;
  } catch {
    return undefined; // the full parse names the problem
  }
  return { key, epoch: Number(m[1]), header: text };
}

/** Parses one header's text; CORRUPT_FILE naming the file and offset when it is not a known record. */
export function parseHeaderText(file: string, text: string, offset: number): RunLogRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw corrupt(file, offset, "a line that is not JSON", error);
  }
  if (!isRecord(value)) {
    const art = (value as { art?: unknown } | null)?.art;
    const outside = art !== undefined && !(typeof art === "string" && isArtifactPath(art));
    throw corrupt(file, offset, outside ? `a record naming the artifact ${JSON.stringify(art).slice(0, 160)}, not a file of artifacts/` : `an unknown record ${text.slice(0, 80)}`);
  }
  return value;
}

// Header shapes are checked by hand: zod costs ~10× more here, and open time is a goal (≤ 20 ms for 10,000 steps).
function isRecord(v: unknown): v is RunLogRecord {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const r = v as Record<string, unknown>;
  if (!Number.isSafeInteger(r.e) || (r.e as number) < 0) return false;
  if ((r.po !== undefined || r.pl !== undefined) && !(nat(r.po) && nat(r.pl))) return false;
  if ((r.at !== undefined && !nat(r.at)) || (r.st !== undefined && !nat(r.st))) return false;
  switch (r.t) {
    case "head":
      return r.v === RUN_LOG_VERSION && (r.base === null || str(r.base)) && Array.isArray(r.pins) && r.pins.every(isPin);
    case "snap":
      if (!(nat(r.idx) && nat(r.size) && (r.idx as number) <= (r.size as number))) return false;
      return r.v === RUN_LOG_VERSION || (r.v === SNAPSHOT_VERSION && nat(r.n) && nat(r.steps) && nat(r.keys) && nat(r.tab));
    case "start":
      return str(r.k) && str(r.in) && nat(r.a);
    case "done":
      return str(r.k) && str(r.in) && nat(r.a) && str(r.ofp) && (r.art === undefined || (str(r.art) && isArtifactPath(r.art as string))) && (r.d === undefined || (r.d === 1 && r.art === undefined));
    case "fail":
      return str(r.k) && str(r.in) && nat(r.a) && str(r.err);
    case "state":
      return nat(r.n) && (r.d === 0 || r.d === 1);
    case "event":
      return str(r.name);
    case "arch":
      return nat(r.n);
    case "base":
      return str(r.snap);
    default:
      return false;
  }
}

// Module-level, not closures inside isRecord: it runs once per line at open.
function str(x: unknown): boolean {
  return typeof x === "string";
}

function nat(x: unknown): boolean {
  return Number.isSafeInteger(x) && (x as number) >= 0;
}

function isPin(p: unknown): p is Pin {
  return Array.isArray(p) && p.length === 3 && p.every((x) => Number.isSafeInteger(x) && (x as number) >= 0) && (p[1] as number) <= (p[2] as number);
}

/** CORRUPT_FILE for a run-log file, naming it and the byte offset. */
export function corrupt(file: string, offset: number, what: string, cause?: unknown): WorkflowError {
  return workflowError("run-log", "CORRUPT_FILE", `${file} holds ${what} at byte ${offset}.`, {
    file,
    value: offset,
    hint: "restore the file from a backup or move the run folder aside; phasekit never rewrites it",
  }, cause);
}
