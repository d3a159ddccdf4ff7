/**
 * The `fs` that proper-lockfile drives for one acquisition. proper-lockfile keeps the refresh timer, the
 * compromise detection and the exit cleanup; this file replaces the three steps of it that race:
 * - create: the lock directory is built aside with its holder file inside, then renamed into place. A rename
 *   onto a non-empty directory fails, so the lock is never visible empty-but-held, and an empty one is free.
 * - stale takeover (its stat → rmdir → mkdir lets 2–3 contenders in at once: 17 of 30 rounds with a planted stale lock and 16 contenders): the stale holder file,
 *   listed before the staleness check, is renamed aside by its unique name. Only one contender's rename can
 *   succeed, and if the lock changed hands meanwhile the old name is gone, so a live lock is never touched.
 * - release: the owner unlinks its own holder file by name; ENOENT means it was taken over, and then nothing
 *   is removed. The now-empty directory is removed with rmdir, which refuses a directory a new holder filled.
 */
import fs from "node:fs";
import path from "node:path";
import { DIR_MODE, FILE_MODE } from "../io/plan-paths.js";
import { fsErrorCode } from "../io/fs-port.js";
import { MAX_FILE_BYTES, SAFE_OPEN_FLAGS } from "../io/safe-open.js";
import { holderFileName, isHolderFileName, parseHolder, type LockHolder } from "./holder.js";
import { judgeHeld } from "./liveness.js";
import { refreshClock, type RefreshStamp } from "./heartbeat.js";

type Callback<T = void> = (error: NodeJS.ErrnoException | null, value?: T) => void;

/** What one acquisition has seen, shared between the lock fs and the lock handle. */
export interface LockFsState {
  acquired: boolean;
  /**
   * When the last refresh of the lock directory that succeeded was sent (`refreshClock`): its send time, not its
   * completion, since a contender's watch starts after the send and a callback can run late.
   */
  lastRefreshMs: RefreshStamp;
  /** Set by a release that found its holder file gone: the lock had been taken over. */
  notOwned: boolean;
  /** The stale holder this acquisition displaced, if any. */
  tookOverFrom: LockHolder | null;
  /** Set when the lock looked stale by the holder's own clock but has not been watched long enough yet. */
  watch: { remainingMs: number; heartbeat: string } | null;
  /** Set when its holder stopped refreshing it without removing it (abandonPlanLock): it is left to go stale. */
  abandoned?: boolean;
}

/** Inputs of `createLockFs`. */
export interface LockFsOptions {
  lockDir: string;
  holder: LockHolder;
  staleMs: number;
  state: LockFsState;
}

const CLEAN_TOLERATED = new Set(["ENOENT", "ENOTEMPTY", "EEXIST"]);

function errno(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}

/** Builds the callback-style fs object proper-lockfile calls (`mkdir`, `stat`, `utimes`, `rmdir`, `rmdirSync`). */
export function createLockFs(options: LockFsOptions) {
  const { lockDir, holder, staleMs, state } = options;
  const runDir = path.dirname(lockDir);
  const ownFile = path.join(lockDir, holderFileName(holder.token));

  function mkdir(_p: string, cb: Callback): void {
    const temp = path.join(runDir, `.lock-new-${holder.token}`);
    const undo = (error: NodeJS.ErrnoException) => fs.rm(temp, { recursive: true, force: true }, () => cb(error));
    fs.mkdir(temp, { mode: DIR_MODE }, (err) => {
      if (err) return cb(err);
      const text = `${JSON.stringify(holder)}\n`;
      fs.writeFile(path.join(temp, holderFileName(holder.token)), text, { mode: FILE_MODE, flag: "wx" }, (err2) => {
        if (err2) return undo(err2);
        const sent = refreshClock();
        fs.rename(temp, lockDir, (err3) => {
          if (!err3) {
            state.acquired = true;
            state.lastRefreshMs = sent;
            return cb(null);
          }
          const code = fsErrorCode(err3);
          undo(code === "ENOTEMPTY" || code === "EEXIST" ? errno("EEXIST", `lock ${lockDir} is held`) : err3);
        });
      });
    });
  }

  // While held, a missing holder file means the lock was taken over: report ENOENT so proper-lockfile's
  // refresh timer declares the lock compromised at once instead of refreshing someone else's directory.
  // Before acquiring, the mtime proper-lockfile sees is not the holder's: the one liveness rule (liveness.ts)
  // judges the holder, and a dead one (or an empty lock) reads as ancient, a live one as just refreshed. So a
  // holder whose clock runs behind or ahead is judged by its pid and by its heartbeat changing, never by its time.
  function stat(p: string, cb: Callback<fs.Stats>): void {
    if (state.acquired) return void fs.stat(ownFile, (err) => (err ? cb(err) : fs.stat(p, cb)));
    fs.stat(p, (err, st) => {
      if (err || st === undefined) return cb(err);
      inspect(lockDir, (seen) => {
        const j = seen.empty ? null : judgeHeld({ lockDir, names: seen.names, holder: seen.holder, mtimeMs: st.mtimeMs, staleMs });
        const ageMs = j === null || j.verdict === "dead" ? Number.MAX_SAFE_INTEGER / 2 : 0;
        // Live by one look, but watching could overturn it (a stale-looking or future heartbeat): the caller may
        // wait and look again.
        state.watch = j !== null && j.watchMs > 0 ? { remainingMs: j.watchMs, heartbeat: j.heartbeat } : null;
        cb(null, Object.assign(Object.create(Object.getPrototypeOf(st) as object) as fs.Stats, st, { mtime: new Date(Date.now() - ageMs), mtimeMs: Date.now() - ageMs }));
      });
    });
  }

  function utimes(p: string, atime: Date, mtime: Date, cb: Callback): void {
    const sent = refreshClock();
    fs.utimes(p, atime, mtime, (err) => {
      if (!err && state.acquired) state.lastRefreshMs = sent;
      cb(err);
    });
  }

  function rmdir(_p: string, cb: Callback): void {
    if (state.abandoned === true) cb(null);
    else if (state.acquired) releaseOwn(cb);
    else takeOverStale(cb);
  }

  function releaseOwn(cb: Callback): void {
    fs.unlink(ownFile, (err) => {
      if (err) {
        if (fsErrorCode(err) !== "ENOENT") return cb(err);
        state.notOwned = true;
        return cb(null);
      }
      fs.rmdir(lockDir, (err2) => cb(err2 && !CLEAN_TOLERATED.has(fsErrorCode(err2) ?? "") ? err2 : null));
    });
  }

  // Called by proper-lockfile when it judged the lock stale. Listing first, then checking the age, means the
  // names we rename belong to a lock at least that old; a lock created after the listing is not in it.
  function takeOverStale(cb: Callback): void {
    fs.readdir(lockDir, (err, names) => {
      if (err) return cb(fsErrorCode(err) === "ENOENT" ? null : err);
      fs.stat(lockDir, (err2, st) => {
        if (err2) return cb(fsErrorCode(err2) === "ENOENT" ? null : err2);
        const holders = names.filter(isHolderFileName);
        if (holders.length !== names.length) {
          return cb(errno("EJUNK", `lock ${lockDir} holds files phasekit did not write: ${names.join(", ")}`));
        }
        const first = holders[0];
        if (first === undefined) return fs.rmdir(lockDir, () => cb(null));
        readHolderFile(path.join(lockDir, first), (err3, text) => {
          if (err3) return cb(fsErrorCode(err3) === "ENOENT" ? null : err3);
          const judged = judgeHeld({ lockDir, names: holders, holder: parseHolder(text ?? ""), mtimeMs: st.mtimeMs, staleMs });
          if (judged.verdict !== "dead") return cb(errno("ELOCKED", `lock ${lockDir} is not stale for its holder`));
          moveAside(holders, () => fs.rmdir(lockDir, () => cb(null)));
        });
      });
    });
  }

  function moveAside(names: string[], done: () => void): void {
    const name = names[0];
    if (name === undefined) return done();
    const aside = path.join(runDir, `.lock-stale-${holder.token}-${name}`);
    fs.rename(path.join(lockDir, name), aside, (err) => {
      // ENOENT: another contender moved it first, or its owner released it. Either way not ours to remove.
      if (err) return done();
      readHolderFile(aside, (_e, text) => {
        state.tookOverFrom = typeof text === "string" ? parseHolder(text) : null;
        fs.unlink(aside, () => moveAside(names.slice(1), done));
      });
    });
  }

  // proper-lockfile calls this from its exit handler for locks still held: remove ours, never another's.
  function rmdirSync(): void {
    if (!state.acquired) return;
    try {
      fs.unlinkSync(ownFile);
      fs.rmdirSync(lockDir);
    } catch {
      // Exit cleanup is best effort: a leftover lock goes stale and is taken over.
    }
  }

  return { mkdir, stat, utimes, rmdir, rmdirSync, realpath: fs.realpath };
}

interface Seen {
  holder: LockHolder | null;
  /** No file at all: a release or takeover half done, so the lock is free. */
  empty: boolean;
  /** The lock directory's entries, null when it could not be listed. */
  names: string[] | null;
}

function inspect(lockDir: string, cb: (seen: Seen) => void): void {
  fs.readdir(lockDir, (err, names) => {
    if (err) return cb({ holder: null, empty: false, names: null });
    if (names.length === 0) return cb({ holder: null, empty: true, names });
    const holders = names.filter(isHolderFileName);
    const only = holders[0];
    if (only === undefined || holders.length !== 1 || names.length !== 1) return cb({ holder: null, empty: false, names });
    readHolderFile(path.join(lockDir, only), (err2, text) => cb({ holder: err2 ? null : parseHolder(text ?? ""), empty: false, names }));
  });
}

/** Reads a holder file without following a symlink or blocking on a FIFO; anything odd is an error. */
function readHolderFile(file: string, cb: (error: NodeJS.ErrnoException | null, text?: string) => void): void {
  fs.open(file, SAFE_OPEN_FLAGS.read, (err, fd) => {
    if (err) return cb(err);
    fs.fstat(fd, (err2, st) => {
      if (err2 || !st.isFile() || st.size > MAX_FILE_BYTES.small) {
        return fs.close(fd, () => cb(err2 ?? errno("EUNSAFE", `${file} is not a small regular file`)));
      }
      fs.readFile(fd, "utf8", (err3, text) => fs.close(fd, () => cb(err3, text)));
    });
  });
}
