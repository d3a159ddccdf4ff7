/**
 * The file-system surface the plan folder uses, as a port: the real one is `nodeFs`; tests wrap it to make the
 * Nth call fail and prove that every step of a write leaves the previous version intact.
 */
import { promises as fsp } from "node:fs";
import type { Dirent, Stats } from "node:fs";

/** The handle methods the store needs from an open file (a subset of `FileHandle`). */
export interface FsFileHandle {
  readonly fd: number;
  write(buffer: Uint8Array, offset: number, length: number, position: number | null): Promise<{ bytesWritten: number }>;
  sync(): Promise<void>;
  datasync(): Promise<void>;
  stat(): Promise<Stats>;
  truncate(length: number): Promise<void>;
  readFile(): Promise<Buffer>;
  close(): Promise<void>;
}

/** The subset of `node:fs/promises` the store needs; every method behaves like its node namesake. */
export interface FsPort {
  open(path: string, flags: string | number, mode?: number): Promise<FsFileHandle>;
  rename(from: string, to: string): Promise<void>;
  /** A second name for a file; fails EEXIST rather than replacing `to` (what rename cannot promise). */
  link(existing: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  mkdir(path: string, options: { recursive?: boolean; mode?: number }): Promise<string | undefined>;
  rmdir(path: string): Promise<void>;
  rm(path: string, options: { recursive?: boolean; force?: boolean }): Promise<void>;
  readdir(path: string): Promise<string[]>;
  readdirEntries(path: string): Promise<Dirent[]>;
  readFile(path: string): Promise<Buffer>;
  appendFile(path: string, data: Uint8Array | string, options?: { mode?: number }): Promise<void>;
  lstat(path: string): Promise<Stats>;
  stat(path: string): Promise<Stats>;
  realpath(path: string): Promise<string>;
  chmod(path: string, mode: number): Promise<void>;
}

/** The real file system (node:fs/promises). */
export const nodeFs: FsPort = {
  open: (path, flags, mode) => fsp.open(path, flags, mode),
  rename: (from, to) => fsp.rename(from, to),
  link: (existing, to) => fsp.link(existing, to),
  unlink: (path) => fsp.unlink(path),
  mkdir: (path, options) => fsp.mkdir(path, options),
  rmdir: (path) => fsp.rmdir(path),
  rm: (path, options) => fsp.rm(path, options),
  readdir: (path) => fsp.readdir(path),
  readdirEntries: (path) => fsp.readdir(path, { withFileTypes: true }),
  readFile: (path) => fsp.readFile(path),
  appendFile: (path, data, options) => fsp.appendFile(path, data, options),
  lstat: (path) => fsp.lstat(path),
  stat: (path) => fsp.stat(path),
  realpath: (path) => fsp.realpath(path),
  chmod: (path, mode) => fsp.chmod(path, mode),
};

/** The node error code of a failed fs call (`ENOENT`, `EEXIST`…), or undefined for anything else. */
export function fsErrorCode(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? code : undefined;
}

/** What to do about a write that failed with `code` (a full disk or a file-size limit, or anything else). */
export function writeFailureHint(code: string | undefined): string {
  return code === "ENOSPC" || code === "EFBIG" || code === "ESHORTWRITE" ? "free disk space or raise the file size limit, then retry" : "check permissions and disk health, then retry";
}
