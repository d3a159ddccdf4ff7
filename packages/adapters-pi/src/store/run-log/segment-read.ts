/**
 * Reading a segment without what its last compaction superseded: the head line, then everything from the last
 * complete `base` line on. A long run compacts when it closes, so its segment is megabytes of records followed
 * by one `base` line; the next open reads that line and the few after it, not every record of the run.
 *
 * The last `base` line is found by searching backwards for `\n{"t":"base"`: a raw newline only ever ends a line
 * (JSON text never holds one), so those bytes can only be the start of a line our encoder wrote as a base
 * record. The lines from there on are decoded and checked as before; the lines before it are not read at all,
 * as the history they held now starts at the snapshot.
 *
 * A segment above the log cap (MAX_FILE_BYTES.log: its writer never grows one past it) is FILE_TOO_LARGE naming
 * it, refused before any byte is read: neither the head search nor the tail may read it whole.
 */
import { closeSync } from "node:fs";
import { MAX_FILE_BYTES } from "../../io/safe-open.js";
import { openRegularSync, readAt } from "../../io/safe-open-sync.js";
import { decodeLines, type DecodedLine } from "./format.js";
import { vanished } from "./read-errors.js";

/** The head line (undefined: the claim's head never landed) and the lines read after it. */
export interface SegmentLines {
  first: DecodedLine | undefined;
  /** The lines from the last complete base line on (or every line after the head when there is none). */
  rest: DecodedLine[];
  /** Offset where the complete lines end (a torn tail follows, if any). */
  validBytes: number;
}

const BASE_START = Buffer.from('\n{"t":"base"', "latin1");
const CHUNK = 256 * 1024;

/** Reads `file` as the module comment says. */
export function readSegment(file: string): SegmentLines {
  const opened = openRegularSync(file, { maxBytes: MAX_FILE_BYTES.log, scope: "run-log" });
  if (opened === null) throw vanished(file);
  const { fd, size } = opened;
  try {
    let head = readAt(fd, 0, Math.min(size, 64 * 1024));
    let nl = head.indexOf(0x0a);
    while (nl === -1 && head.length < size) {
      head = readAt(fd, 0, Math.min(size, head.length * 4));
      nl = head.indexOf(0x0a);
    }
    if (nl === -1) return { first: undefined, rest: [], validBytes: 0 };
    const first = decodeLines(file, head, 0, nl + 1).lines[0];
    let end = size;
    for (;;) {
      const p = lastBaseStart(fd, nl, end);
      const from = p === -1 ? nl + 1 : p + 1;
      const tail = readAt(fd, from, size - from);
      const decoded = decodeLines(file, tail, 0, tail.length, from);
      // A base line cut by a crash is no compaction: look before it.
      if (p !== -1 && decoded.lines.length === 0) {
        end = p + BASE_START.length - 1;
        continue;
      }
      return { first, rest: decoded.lines, validBytes: decoded.validBytes };
    }
  } finally {
    closeSync(fd);
  }
}

/** Offset of the newline before the last base line starting in (headNewline, end), or -1. */
function lastBaseStart(fd: number, headNewline: number, end: number): number {
  while (end - headNewline >= BASE_START.length) {
    const start = Math.max(headNewline, end - CHUNK);
    const at = readAt(fd, start, end - start).lastIndexOf(BASE_START);
    if (at !== -1) return start + at;
    if (start === headNewline) return -1;
    // Overlap by the pattern's length less one, so a match across the boundary is found.
    end = start + BASE_START.length - 1;
  }
  return -1;
}
