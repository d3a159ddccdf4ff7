/**
 * A segment's bytes: records written one after another at offsets this holder tracks, and zero-filled room after
 * them.
 *
 * Room: a durable batch that does not fit in the file writes ROOM_BYTES of zeros after itself, and the batches
 * after it are written into those zeros at their offsets. An fdatasync after an append must also commit the
 * file's new size to the file system's journal; one after a write into blocks that already hold bytes need not,
 * and on ext4 it took half the time (docs/decisions.md, D14 "Room"). Readers read the zeros as a torn tail,
 * which every reader stops at and every claim leaves unpinned: a zero where a line starts ends the lines
 * (format.ts `decodeLines`), and zeros hold no newline.
 * The holder cuts its room off when it closes (`trimRoom`); a crash leaves it, as it leaves a torn tail.
 */
import { fdatasyncSync, ftruncateSync, writeSync } from "node:fs";
import { isWorkflowError, workflowError, type WorkflowError } from "@phasekit/core";
import { fsErrorCode, writeFailureHint } from "../../io/fs-port.js";
import { MAX_FILE_BYTES } from "../../io/safe-open.js";

/** Called before every file-system call of the run log, with its name (tests stop or kill the process there). */
export type FsBoundary = (name: string) => void;

/** Zeros written after a durable batch that does not fit in the file (see the module comment). */
export const ROOM_BYTES = 256 * 1024;
let zeros: Buffer | undefined;

/** One open segment's bytes; see the module comment. */
export class SegmentFile {
  /** Bytes the file holds: the records, then the zero-filled room not yet written into. */
  private end: number;
  /** Set once a failed write left records whole: what every later write is refused with. */
  broken: WorkflowError | undefined;

  constructor(
    private readonly fd: number,
    readonly file: string,
    /** Bytes of records (the next ones land here). */
    public size: number,
    private readonly boundary: FsBoundary,
  ) {
    this.end = size;
  }

  /**
   * Writes `bytes` (whole records) after the records; `room`: if they do not fit in the file, zeros follow them. A
   * failed write of the bytes cuts the segment back to the end of the last record it left whole (where the records
   * ended, if none), room and all, and throws WRITE_FAILED. A failed write of the room (a full disk, a file-size
   * limit) cuts back to the end of the bytes and no lower, and does not throw: they are whole, a newer holder may
   * have pinned them already, and the room only makes later syncs cheaper.
   */
  write(bytes: Buffer, room: boolean): void {
    const start = this.size;
    const stop = start + bytes.length;
    // Readers refuse a segment above the log cap without reading it, so the writer never grows one past it.
    if (stop > MAX_FILE_BYTES.log) {
      throw workflowError("run-log", "FILE_TOO_LARGE", `${this.file} would grow to ${stop} bytes, above the cap of ${MAX_FILE_BYTES.log} bytes of a run-log segment; nothing was written.`, {
        file: this.file,
        value: stop,
        max: MAX_FILE_BYTES.log,
        hint: "run the workflow again: the next runner starts a new segment (outputs above 64 KiB are stored as artifacts, not in the segment)",
      });
    }
    if (this.broken !== undefined) throw this.broken;
    const fill = room && stop > this.end ? Math.min(ROOM_BYTES, MAX_FILE_BYTES.log - stop) : 0;
    const written = { bytes: 0 };
    try {
      this.writeAt(bytes, start, "write", written);
    } catch (error) {
      // Records the failed write left whole stay: a holder displaced meanwhile (frozen between the parts of a short
      // write) may have been pinned up to them by its newer holder, and a cut below a pin breaks every later read.
      // Like the bytes a crash leaves, they were never acknowledged. Only the torn record after them goes. The
      // holder's own view of the run (its index, the state a state delta builds on) does not hold them, so it
      // writes nothing more: the next holder reads the segment as it is.
      const whole = bytes.subarray(0, written.bytes).lastIndexOf(0x0a) + 1;
      this.size = start + whole;
      const failed = writeFailed(this.file, whole, error);
      if (whole > 0) this.broken = failed;
      this.boundary("ftruncate");
      try {
        ftruncateSync(this.fd, this.size);
        this.end = this.size;
      } catch {
        // The write error is the one to report; what could not be cut off holds no newline: a torn tail, which the
        // next record overwrites from its start.
      }
      throw failed;
    }
    this.size = stop;
    this.end = Math.max(this.end, stop);
    if (fill === 0) return;
    try {
      this.writeAt((zeros ??= Buffer.alloc(ROOM_BYTES)).subarray(0, fill), stop, "write(room)");
      this.end = stop + fill;
    } catch {
      try {
        this.boundary("ftruncate(room)");
        ftruncateSync(this.fd, stop);
      } catch {
        // Zeros left after the record read as a torn tail.
      }
    }
  }

  /**
   * fdatasync, after `before` (the folder's sync). A failure of either ends this holder's writing: the records
   * written since the last sync are whole in the file (where the next holder reads them) but neither acknowledged
   * nor in the holder's view of the run, as after a failed write that left records whole. It throws the typed
   * error the folder's sync threw, or WRITE_FAILED naming the segment.
   */
  sync(before: () => void): void {
    try {
      before();
      this.boundary("fdatasync");
      fdatasyncSync(this.fd);
    } catch (error) {
      this.broken ??= isWorkflowError(error) ? error : writeFailed(this.file, -1, error);
      throw this.broken;
    }
  }

  /** Cuts off the room not written into (at close: the segment then ends with its last record). */
  trimRoom(): void {
    if (this.end <= this.size) return;
    this.boundary("ftruncate(room)");
    ftruncateSync(this.fd, this.size);
    this.end = this.size;
  }

  /** Writes all of `bytes` at `at`; `written.bytes` says how many landed when it throws. */
  private writeAt(bytes: Buffer, at: number, boundary: string, written = { bytes: 0 }): void {
    while (written.bytes < bytes.length) {
      this.boundary(boundary);
      written.bytes += writeSync(this.fd, bytes, written.bytes, bytes.length - written.bytes, at + written.bytes);
    }
  }
}

/**
 * WRITE_FAILED naming the segment: what a failed write of records left (`kept`: bytes of whole records, which stay
 * unacknowledged and end this holder's writing; -1: a failed sync, after which the records written since the last
 * one stay so) and what to do (the hint every failed write of ours gives).
 */
function writeFailed(file: string, kept: number, cause: unknown): WorkflowError {
  const left =
    kept === 0
      ? "nothing of it is in the segment"
      : kept < 0
        ? "the records written since the last sync stay in the segment, unacknowledged, and this holder writes nothing more to it"
        : `${kept} bytes of whole records it wrote stay in the segment, unacknowledged, and this holder writes nothing more to it`;
  const code = fsErrorCode(cause);
  return workflowError("run-log", "WRITE_FAILED", `${kept < 0 ? "syncing" : "writing"} ${file} failed (${cause instanceof Error ? cause.message : String(cause)}): ${left}.`, {
    file,
    errno: code,
    ...(kept <= 0 ? {} : { value: kept }),
    hint: kept === 0 ? writeFailureHint(code) : `${writeFailureHint(code)}: the next holder (a resume) reads the segment as it is`,
  }, cause);
}
