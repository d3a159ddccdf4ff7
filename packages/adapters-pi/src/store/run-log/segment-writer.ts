/**
 * The holder's own segment: appends with group commit and the fence check.
 *
 * Records that must be durable queue up until the event loop's next turn and go out together: one write, and one
 * fdatasync (parallel steps share a sync), unless the caller says none can join them (a lone step's end); one that
 * need not be durable, with nothing queued ahead of it, is written at once. The calls are synchronous: a thread-pool round trip
 * per call cost more than the write itself, and the event loop blocks for one sync at most. After the sync, the fence: if a segment of a higher epoch
 * exists, a newer holder has pinned this one and may not have seen these bytes, so the batch is refused with
 * LOCK_LOST instead of acknowledged (and every later append is refused at once). A failed or short write is cut
 * back to the last record it left whole (segment-file.ts: where the bytes land, the zero-filled room after them,
 * and why a cut never goes below a whole record).
 */
import { fstatSync, lstatSync, readdirSync } from "node:fs";
import { isWorkflowError, workflowError, type WorkflowError } from "@phasekit/core";
import { fsErrorCode, type FsFileHandle } from "../../io/fs-port.js";
import { watchOpenName, type OpenNameWatch } from "../../io/open-name.js";
import { kindOf, unsafeFile } from "../../io/safe-open.js";
import { syncRealDirSync } from "../../io/safe-open-sync.js";
import { segmentEpoch } from "./file-names.js";
import { SegmentFile } from "./segment-file.js";

export { ROOM_BYTES } from "./segment-file.js";

export type { FsBoundary } from "./segment-file.js";
import type { FsBoundary } from "./segment-file.js";

/**
 * Bytes to append, or a function that makes them from the offset they will land at (called when the batch is
 * written, in order; it must not throw): an output delta names its base by distance (output-delta.ts).
 */
export type AppendBytes = Buffer | ((offset: number) => Buffer);

interface Pending {
  bytes: AppendBytes;
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
  /** Ends when the last `exclusive` call given so far has ended. */
  private turn: Promise<void> = Promise.resolve();
  /** Set by close(): what every append is refused with from then on. */
  private closedError: WorkflowError | undefined;
  /** Set by the run log from its options. */
  beforeBody: (() => Promise<void> | undefined) | undefined;
  // The open segment's identity: an fd names one inode for its whole life, so one fstat serves every fence.
  private own: { ino: number; dev: number } | undefined;
  /** null: the name is checked by a stat each time (io/open-name.ts cannot tell here). */
  private nameWatch: OpenNameWatch | null | undefined;
  private readonly bytes: SegmentFile;

  constructor(
    readonly handle: FsFileHandle,
    readonly file: string,
    readonly dir: string,
    readonly epoch: number,
    /** Bytes of records in the segment (appends land here). */
    size: number,
    private readonly boundary: FsBoundary,
  ) {
    this.bytes = new SegmentFile(handle.fd, file, size, boundary);
  }

  /** Bytes of records in the segment (appends land here). */
  get size(): number {
    return this.bytes.size;
  }

  /** The LOCK_LOST error once a newer epoch was seen, else undefined. */
  get lost(): WorkflowError | undefined {
    return this.lostError;
  }

  /**
   * Queues `bytes`; resolves with the offset they landed at once written (and synced + fenced if durable). `alone`:
   * the caller knows nothing else will be appended in this turn (the only step in flight ending), so a durable
   * record with nothing queued ahead of it goes out now rather than waiting a turn to share a sync.
   */
  append(bytes: AppendBytes, durable: boolean, alone = false): Promise<number> {
    const refused = this.lostError ?? this.closedError ?? this.bytes.broken;
    if (refused !== undefined) return Promise.reject(refused);
    // A record that needs no sync, with nothing queued ahead of it, goes out now: batching only shares syncs, and
    // a turn of the event loop per step `started` line cost more than the write.
    if (!durable && this.pending.length === 0 && this.paused === 0) {
      const at = this.size;
      try {
        this.writeAll(typeof bytes === "function" ? bytes(at) : bytes);
      } catch (error) {
        return Promise.reject(error);
      }
      return Promise.resolve(at);
    }
    return new Promise<number>((resolve, reject) => {
      this.pending.push({ bytes, durable, resolve, reject });
      if (alone && this.pending.length === 1 && this.paused === 0 && !this.scheduled) this.flush();
      else this.kick();
    });
  }

  /**
   * The log closes: appends still queued (waiting for their turn to share a sync) are refused with `error`, the log's
   * `ended`, as is every later one; none reaches the file after this. The settling at close (fold.ts) writes through
   * `writeAll`/`sync`, not through the queue.
   */
  close(error: WorkflowError): void {
    this.closedError ??= error;
    const queued = this.pending;
    this.pending = [];
    for (const p of queued) p.reject(this.closedError);
  }

  /**
   * Runs `fn` with no append in flight and none starting, and after every `fn` given before it has ended
   * (compactions one at a time: the close-time fold started during a step's compaction deleted the snapshot the
   * other was about to name, and the history could not be read again).
   */
  async exclusive<R>(fn: () => Promise<R>): Promise<R> {
    this.paused++;
    const previous = this.turn;
    let done!: () => void;
    this.turn = new Promise<void>((resolve) => (done = resolve));
    try {
      await previous;
      return await fn();
    } finally {
      done();
      this.paused--;
      this.kick();
    }
  }

  /** Resolves once every `exclusive` call made so far has ended (never rejects). */
  quiet(): Promise<void> {
    return this.turn;
  }

  /**
   * Throws LOCK_LOST when a segment of a higher epoch exists (a newer holder claimed the run), and UNSAFE_FILE
   * naming the segment when its name no longer leads to the file this holder writes (the segment, or `runlog/`
   * itself, was replaced by a symlink, a FIFO, another file or folder): records written to a file no reader
   * will find are never acknowledged, and the folder listed below is then not this run's.
   */
  fence(): void {
    if (this.lostError !== undefined) throw this.lostError;
    this.boundary("readdir(fence)");
    const newer = this.newerEpoch();
    // The name is checked after the listing, and a mismatch listed again: a newer holder's compaction deletes
    // this segment's name, and that is LOCK_LOST (once a newer segment exists, one always does).
    const replaced = newer === undefined ? this.ownNameReplaced() : undefined;
    const displacedBy = replaced === undefined ? newer : this.newerEpoch(true);
    if (replaced !== undefined && displacedBy === undefined) {
      this.lostError = unsafeFile("run-log", this.file, replaced);
      throw this.lostError;
    }
    if (displacedBy === undefined) return;
    this.lostError = workflowError("run-log", "LOCK_LOST", `epoch ${this.epoch} of ${this.dir} was displaced by epoch ${displacedBy}: nothing more is acknowledged.`, {
      file: this.file,
      value: displacedBy,
      hint: "another runner took the run over; let it finish, or resume after it stops",
    });
    throw this.lostError;
  }

  /**
   * The fence before a step's body. The listing sees a newer holder only once it has claimed its segment; a holder
   * woken (SIGSTOP, a starved event loop) after a newcomer took the lock but before it claimed would start the body
   * (it could never acknowledge it, but the side effect happens). The lock's own check closes that window; a lock
   * found taken there refuses every later append too. While the lock's heartbeat is fresh (its check answers
   * undefined at once), no contender can have taken the lock, so none can have claimed a newer segment either:
   * the listing is skipped, and only the segment's own name is looked at (one lstat: a segment or `runlog/`
   * replaced or removed under a live holder still stops the body). The fence after the sync still lists the
   * folder before anything is acknowledged.
   */
  fenceBody(): Promise<void> | undefined {
    if (this.lostError !== undefined) return Promise.reject(this.lostError);
    const pending = this.beforeBody?.();
    if (pending === undefined) {
      // The whole fence decides what a replaced name means (a newer holder's compaction, or a hostile change).
      if (this.beforeBody === undefined || this.ownNameReplaced() !== undefined) this.fence();
      return undefined;
    }
    return this.fenceAfter(pending);
  }

  private async fenceAfter(pending: Promise<void>): Promise<void> {
    try {
      await pending;
    } catch (error) {
      if (isWorkflowError(error) && error.code === "LOCK_LOST") this.lostError ??= error;
      throw error;
    }
    this.fence();
  }

  /** The epoch of a newer segment in the folder, if any (`quiet`: a folder that cannot be listed has none). */
  private newerEpoch(quiet = false): number | undefined {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch (error) {
      if (quiet) return undefined;
      const replaced = this.ownNameReplaced();
      this.lostError = replaced === undefined ? unreadable(this.dir, error) : unsafeFile("run-log", this.file, replaced);
      throw this.lostError;
    }
    return names.map(segmentEpoch).find((e) => e !== undefined && e > this.epoch);
  }

  /**
   * What is at this segment's name instead of the file this holder writes, or undefined when it is that file. Asked
   * without a stat of the segment where io/open-name.ts can tell (a stat between writes costs every sync an inode
   * write); the stat answers what is there when it cannot, or when the name may have changed.
   */
  private ownNameReplaced(): string | undefined {
    if (this.nameWatch === undefined) this.nameWatch = watchOpenName(this.handle.fd, this.file) ?? null;
    if (this.nameWatch !== null && this.nameWatch()) return undefined;
    const own = (this.own ??= fstatSync(this.handle.fd));
    try {
      const st = lstatSync(this.file);
      if (st.isFile() && st.ino === own.ino && st.dev === own.dev) return undefined;
      return st.isFile() ? "another file than the segment this holder writes" : kindOf(st);
    } catch (error) {
      return fsErrorCode(error) === "ENOENT" ? "gone" : `unreachable (${fsErrorCode(error) ?? String(error)}: ${this.dir} is not the folder it was)`;
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

  /** Makes everything written so far durable: the folder entry once, then the data (segment-file.ts `sync`). */
  sync(): void {
    this.bytes.sync(() => {
      if (this.dirSynced) return;
      this.boundary("fsync(runlog folder)");
      syncRealDirSync(this.dir, "run-log");
      this.dirSynced = true;
    });
  }

  private flush(): void {
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    const start = this.size;
    const offsets: number[] = [];
    const chunks: Buffer[] = [];
    let total = 0;
    for (const p of batch) {
      offsets.push(start + total);
      const bytes = typeof p.bytes === "function" ? p.bytes(start + total) : p.bytes;
      chunks.push(bytes);
      total += bytes.length;
    }
    try {
      const durable = batch.some((p) => p.durable);
      this.writeAll(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total), durable);
      if (durable) {
        this.sync();
        this.fence();
      }
    } catch (error) {
      for (const p of batch) p.reject(error);
      return;
    }
    batch.forEach((p, i) => p.resolve(offsets[i] as number));
  }

  /** Writes `bytes` after the records (segment-file.ts); `room`: zeros follow them if they do not fit. */
  writeAll(bytes: Buffer, room = false): void {
    this.bytes.write(bytes, room);
  }

  /** Cuts off the room not written into (at close: the segment then ends with its last record). */
  trimRoom(): void {
    this.bytes.trimRoom();
  }
}

function unreadable(dir: string, error: unknown): WorkflowError {
  return workflowError("run-log", "READ_FAILED", `cannot list ${dir}: ${String(error)}`, { file: dir, errno: fsErrorCode(error) }, error);
}
