/**
 * The holder's own segment: appends with group commit and the fence check.
 *
 * Records queue up until the event loop's next turn and go out together: one write, and one fdatasync when any
 * of them must be durable (parallel steps share a sync). The calls are synchronous: a thread-pool round trip
 * per call cost more than the write itself, and the event loop blocks for one sync at most. After the sync, the fence: if a segment of a higher epoch
 * exists, a newer holder has pinned this one and may not have seen these bytes, so the batch is refused with
 * LOCK_LOST instead of acknowledged (and every later append is refused at once). A failed or short write is cut
 * back, so the log stays exactly as it was.
 */
import { closeSync, constants, fdatasyncSync, fsyncSync, ftruncateSync, openSync, readdirSync, writeSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { workflowError, type WorkflowError } from "@phasekit/core";
import { segmentEpoch } from "./format.js";

/** Called before every file-system call of the run log, with its name (tests stop or kill the process there). */
export type FsBoundary = (name: string) => void;

interface Pending {
  bytes: Buffer;
  durable: boolean;
  resolve: (offset: number) => void;
  reject: (error: unknown) => void;
}

/** Appends to one segment; see the module comment. */
export class SegmentWriter {
  private pending: Pending[] = [];
  private scheduled = false;
  private paused = 0;
  /** The folder's entry for this segment is synced with the first durable batch (not at claim: opening is cheap). */
  private dirSynced = false;
  private lostError: WorkflowError | undefined;

  constructor(
    readonly handle: FileHandle,
    readonly file: string,
    readonly dir: string,
    readonly epoch: number,
    /** Bytes in the segment (appends land here). */
    public size: number,
    private readonly boundary: FsBoundary,
  ) {}

  /** The LOCK_LOST error once a newer epoch was seen, else undefined. */
  get lost(): WorkflowError | undefined {
    return this.lostError;
  }

  /** Queues `bytes`; resolves with the offset they landed at once written (and synced + fenced if durable). */
  append(bytes: Buffer, durable: boolean): Promise<number> {
    if (this.lostError !== undefined) return Promise.reject(this.lostError);
    return new Promise<number>((resolve, reject) => {
      this.pending.push({ bytes, durable, resolve, reject });
      this.kick();
    });
  }

  /** Runs `fn` with no append in flight and none starting (compaction). */
  async exclusive<R>(fn: () => Promise<R>): Promise<R> {
    this.paused++;
    try {
      return await fn();
    } finally {
      this.paused--;
      this.kick();
    }
  }

  /** Throws LOCK_LOST when a segment of a higher epoch exists (a newer holder claimed the run). */
  fence(): void {
    if (this.lostError !== undefined) throw this.lostError;
    this.boundary("readdir(fence)");
    const names = readdirSync(this.dir);
    const newer = names.map(segmentEpoch).find((e) => e !== undefined && e > this.epoch);
    if (newer !== undefined) {
      this.lostError = workflowError("run-log", "LOCK_LOST", `epoch ${this.epoch} of ${this.dir} was displaced by epoch ${newer}: nothing more is acknowledged.`, {
        file: this.file,
        value: newer,
        hint: "another runner took the run over; let it finish, or resume after it stops",
      });
      throw this.lostError;
    }
  }

  private kick(): void {
    if (this.scheduled || this.paused > 0 || this.pending.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.paused > 0) return;
      this.flush();
      this.kick();
    });
  }

  /** Makes everything written so far durable: the folder entry once, then the data. */
  sync(): void {
    if (!this.dirSynced) {
      this.boundary("fsync(runlog folder)");
      const fd = openSync(this.dir, constants.O_RDONLY | constants.O_NOFOLLOW);
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      this.dirSynced = true;
    }
    this.boundary("fdatasync");
    fdatasyncSync(this.handle.fd);
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    const start = this.size;
    const offsets: number[] = [];
    let total = 0;
    for (const p of batch) {
      offsets.push(start + total);
      total += p.bytes.length;
    }
    try {
      this.writeAll(batch.length === 1 ? (batch[0] as Pending).bytes : Buffer.concat(batch.map((p) => p.bytes), total));
      if (batch.some((p) => p.durable)) {
        this.sync();
        this.fence();
      }
    } catch (error) {
      for (const p of batch) p.reject(error);
      return;
    }
    batch.forEach((p, i) => p.resolve(offsets[i] as number));
  }

  /** Writes `bytes` at the end; on any failure cuts the segment back to where it was and rethrows. */
  writeAll(bytes: Buffer): void {
    const start = this.size;
    let done = 0;
    try {
      while (done < bytes.length) {
        this.boundary("write");
        done += writeSync(this.handle.fd, bytes, done, bytes.length - done);
      }
    } catch (error) {
      this.boundary("ftruncate");
      try {
        ftruncateSync(this.handle.fd, start);
      } catch {
        // The write error is the one to report; a segment that could not be cut back ends in a torn tail.
      }
      throw error;
    }
    this.size = start + bytes.length;
  }
}
