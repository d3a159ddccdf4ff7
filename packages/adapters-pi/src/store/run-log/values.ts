/**
 * Reading values the index points at: an inline payload (one positioned read from a file already open, then the
 * fingerprint check) or a content-addressed artifact. Synchronous reads: a reuse hit must cost microseconds,
 * and a thread-pool round trip alone costs more than reading 1 KB from the page cache.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import path from "node:path";
import { fingerprintOfCanonical } from "../fingerprint.js";
import type { ValueLocation } from "./run-index.js";

/** Outcome of reading a stored value. */
export type ValueRead = { ok: true; text: string } | { ok: false; reason: "missing" | "corrupt"; detail: string };

/** Open read descriptors of run-log files, by path; the holder's own segment is registered with its fd. */
export class ValueFiles {
  private readonly fds = new Map<string, { fd: number; owned: boolean }>();

  /** Uses `fd` (not closed here) for reads of `file`. */
  register(file: string, fd: number): void {
    this.fds.set(file, { fd, owned: false });
  }

  /** The bytes at `loc` as text, checked against `fingerprint` when given. */
  read(loc: ValueLocation, fingerprint?: string): ValueRead {
    const r = this.readBytes(loc, fingerprint);
    return r.ok ? { ok: true, text: r.bytes.toString("utf8") } : r;
  }

  /** The bytes at `loc`, checked against `fingerprint` when given. */
  readBytes(loc: ValueLocation, fingerprint?: string): { ok: true; bytes: Buffer } | { ok: false; reason: "missing" | "corrupt"; detail: string } {
    let fd: number;
    try {
      fd = this.descriptor(loc.file);
    } catch (error) {
      return { ok: false, reason: "missing", detail: String(error) };
    }
    const buf = Buffer.allocUnsafe(loc.length);
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

  /** Forgets (and closes, when opened here) every descriptor of files other than those in `keep`. */
  retain(keep: ReadonlySet<string>): void {
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
   * The read descriptor of `file`, opened now (a regular file, no link followed) if it is not open yet. It stays
   * open until `retain`/`close`: an index that points into a file keeps reading the file it opened, even after a
   * newer holder deleted that name.
   */
  descriptor(file: string): number {
    const known = this.fds.get(file);
    if (known !== undefined) return known.fd;
    const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    if (!fstatSync(fd).isFile()) {
      closeSync(fd);
      throw new Error(`${file} is not a regular file`);
    }
    this.fds.set(file, { fd, owned: true });
    return fd;
  }
}

/** Artifacts folder inside the run folder, and the name of an artifact written by `epoch`. */
export const RUN_ARTIFACTS_DIR = "artifacts";

/** `artifacts/<sha256>-<epoch>.json`: the epoch in the name is what lets a compaction delete only its own. */
export function artifactName(digest: string, epoch: number): string {
  return path.join(RUN_ARTIFACTS_DIR, `${digest}-${String(epoch).padStart(10, "0")}.json`);
}

const ARTIFACT = /^([0-9a-f]{64})(?:-(\d{10}))?\.json$/;

/** The digest and epoch of an artifact file name (legacy `<sha256>.json` is epoch 0), or undefined. */
export function artifactId(name: string): { digest: string; epoch: number } | undefined {
  const m = ARTIFACT.exec(name);
  return m ? { digest: m[1] as string, epoch: m[2] === undefined ? 0 : Number(m[2]) } : undefined;
}
