/**
 * Reading values the index points at: an inline payload (one positioned read from a file already open, then the
 * fingerprint check) or a content-addressed artifact. Synchronous reads: a reuse hit must cost microseconds,
 * and a thread-pool round trip alone costs more than reading 1 KB from the page cache.
 */
import { closeSync, readSync } from "node:fs";
import { MAX_FILE_BYTES } from "../../io/safe-open.js";
import { openRegularSync } from "../../io/safe-open-sync.js";
import { fingerprintOfCanonical } from "../../engine/fingerprint.js";
import type { ValueLocation } from "./run-index.js";

/** Outcome of reading a stored value. */
export type ValueRead = { ok: true; text: string } | { ok: false; reason: "missing" | "corrupt"; detail: string };

/** Open read descriptors of run-log files, by path; the holder's own segment is registered with its fd. */
export class ValueFiles {
  private readonly fds = new Map<string, { fd: number; owned: boolean }>();
  /** One buffer reused by `readBytes(…, scratch)`: a compaction reads every value once, and must not keep them. */
  private scratchBuffer: Buffer | undefined;
  /**
   * The output materialized last (output-delta.ts): a resume replays its steps in order, and the next output is
   * stored as a delta on this one, so a hit in order applies one delta. Never handed out (callers get a parse of
   * its text), so it is never mutated.
   */
  lastOutput: { file: string; offset: number; value: unknown } | undefined;

  /** Uses `fd` (not closed here) for reads of `file`. */
  register(file: string, fd: number): void {
    this.fds.set(file, { fd, owned: false });
  }

  /** The bytes at `loc` as text, checked against `fingerprint` when given. */
  read(loc: ValueLocation, fingerprint?: string): ValueRead {
    const r = this.readBytes(loc, fingerprint);
    return r.ok ? { ok: true, text: r.bytes.toString("utf8") } : r;
  }

  /**
   * The bytes at `loc`, checked against `fingerprint` when given. `scratch`: read into a buffer this object
   * reuses, valid until the next scratch read (nothing allocated per value).
   */
  readBytes(loc: ValueLocation, fingerprint?: string, scratch = false): { ok: true; bytes: Buffer } | { ok: false; reason: "missing" | "corrupt"; detail: string } {
    let fd: number;
    try {
      fd = this.descriptor(loc.file);
    } catch (error) {
      return { ok: false, reason: "missing", detail: String(error) };
    }
    // A length comes from a header a hostile file may have written: never allocate past the cap on its word.
    if (loc.length > MAX_FILE_BYTES.log) return { ok: false, reason: "corrupt", detail: `${loc.file} names a value of ${loc.length} bytes at byte ${loc.offset}, above the cap of ${MAX_FILE_BYTES.log}` };
    const buf = scratch ? this.scratch(loc.length) : Buffer.allocUnsafe(loc.length);
    let got = 0;
    while (got < loc.length) {
      const n = readSync(fd, buf, got, loc.length - got, loc.offset + got);
      if (n === 0) return { ok: false, reason: "corrupt", detail: `${loc.file} ends before byte ${loc.offset + loc.length}` };
      got += n;
    }
    if (fingerprint !== undefined && fingerprintOfCanonical(buf) !== fingerprint) {
      return { ok: false, reason: "corrupt", detail: `${loc.file} at byte ${loc.offset} does not match ${fingerprint}` };
    }
    return { ok: true, bytes: buf };
  }

  private scratch(length: number): Buffer {
    if (this.scratchBuffer === undefined || this.scratchBuffer.length < length) this.scratchBuffer = Buffer.allocUnsafe(Math.max(length, 64 * 1024));
    return this.scratchBuffer.subarray(0, length);
  }

  /** Forgets (and closes, when opened here) every descriptor of files other than those in `keep`. */
  retain(keep: ReadonlySet<string>): void {
    if (this.lastOutput !== undefined && !keep.has(this.lastOutput.file)) this.lastOutput = undefined;
    for (const [file, { fd, owned }] of this.fds) {
      if (keep.has(file)) continue;
      if (owned) closeSync(fd);
      this.fds.delete(file);
    }
  }

  /** Closes every descriptor opened here. */
  close(): void {
    this.retain(new Set());
  }

  /**
   * The read descriptor of `file`, opened now (io/safe-open-sync.ts: a regular file, no link followed) if it is
   * not open yet. It stays open until `retain`/`close`: an index that points into a file keeps reading the file
   * it opened, even after a newer holder deleted that name. No size cap here: values are read by position, each
   * one capped above; what a reader reads whole is capped where it reads it.
   */
  descriptor(file: string): number {
    const known = this.fds.get(file);
    if (known !== undefined) return known.fd;
    const opened = openRegularSync(file, { maxBytes: Number.MAX_SAFE_INTEGER, scope: "run-log" });
    if (opened === null) throw Object.assign(new Error(`${file} does not exist`), { code: "ENOENT" });
    this.fds.set(file, { fd: opened.fd, owned: true });
    return opened.fd;
  }
}
