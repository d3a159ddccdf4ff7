/**
 * The one liveness rule of a run's lock: is the process that holds it alive? The lock applies it before taking a
 * lock over, pause acceptance before filing a pause, and `phasekit list` / `show` before calling a run crashed.
 * Evidence, strongest first, and never "the holder's timestamp against our clock" to declare a holder dead:
 * 1. Identity. A holder that ran on this host, this boot and this pid namespace is dead once its pid is gone
 *    (ESRCH), whatever its timestamps say (a lock dated in the future by a skewed clock included), and alive while
 *    its pid exists.
 * 2. The watched heartbeat. The holder rewrites the lock directory's mtime every refresh, on its own clock, so
 *    only a change of it means something: a heartbeat (holder file names + mtime) this process has watched
 *    unchanged, on its own monotonic clock, for longer than the holder's stale time is dead; one that changed
 *    while watched is alive.
 * Our wall clock may only vouch for a heartbeat that looks fresh (an mtime within the stale time, not in the
 * future), which saves a watch; a heartbeat it cannot vouch for is "unverified" until it has been watched.
 */
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { observedAgeMs } from "./heartbeat.js";
import { judgePid } from "../io/process-space.js";
import { DEFAULT_LOCK_STALE_MS, readLockHolder, type LockHolder } from "./holder.js";

/** `none`: nobody holds the lock; `live` / `dead`: its holder's process is alive / gone. */
export type LivenessVerdict = "none" | "live" | "dead";

/** What decided a verdict: the holder's pid, the watched heartbeat, a fresh-looking heartbeat, or nothing yet. */
export type LivenessEvidence = "free" | "pid" | "heartbeat" | "fresh" | "unverified";

/** The verdict on the lock of one run folder. */
export interface Liveness {
  verdict: LivenessVerdict;
  by: LivenessEvidence;
  lockDir: string;
  /** The holder as recorded (null when the lock is free or its holder file is unreadable). */
  holder: LockHolder | null;
}

/** One look at a held lock: its entries (null when unlistable), the parsed holder and the directory's mtime. */
export interface HeldLockSeen {
  lockDir: string;
  names: readonly string[] | null;
  holder: LockHolder | null;
  mtimeMs: number;
  /** The judge's own stale time; the holder's is honoured when longer. */
  staleMs: number;
}

/** The rule applied to one look; `watchMs` > 0 when the verdict is `live` but watching that long could overturn it. */
export interface HeldJudgement {
  verdict: "live" | "dead";
  by: Exclude<LivenessEvidence, "free">;
  watchMs: number;
  /** The heartbeat seen (holder file names + mtime): a different one later means the holder refreshed. */
  heartbeat: string;
}

// An mtime this far ahead of our clock is not vouched for (file times and Date.now() differ by a tick or two).
const FUTURE_TOLERANCE_MS = 1_000;
const POLL_MS = 100;

/** Judges a held lock from one look, recording its heartbeat in this process's watch memory. */
export function judgeHeld(seen: HeldLockSeen): HeldJudgement {
  const limit = Math.max(seen.staleMs, seen.holder?.staleMs ?? 0);
  const names = seen.names === null ? "?" : seen.names.join(",");
  const heartbeat = `${names}@${seen.mtimeMs}`;
  const observedMs = observedAgeMs(seen.lockDir, names, seen.mtimeMs);
  const pid = seen.holder !== null && seen.names?.length === 1 ? judgePid(seen.holder) : "unknown";
  if (pid === "dead") return { verdict: "dead", by: "pid", watchMs: 0, heartbeat };
  if (observedMs > limit) return { verdict: "dead", by: "heartbeat", watchMs: 0, heartbeat };
  const age = Date.now() - seen.mtimeMs;
  const fresh = age <= limit && age >= -FUTURE_TOLERANCE_MS;
  // A live pid proves the process exists, but not that it still refreshes (SIGSTOP, a reused pid): a stale-looking
  // heartbeat stays worth watching for a caller that can wait (the lock does).
  const watchMs = fresh ? 0 : Math.max(1, limit - observedMs);
  return { verdict: "live", by: pid === "alive" ? "pid" : fresh ? "fresh" : "unverified", watchMs, heartbeat };
}

/**
 * The liveness of the lock of `runDir`. With `watchMs`, a verdict the rule cannot settle from one look (a
 * heartbeat that looks stale or lies in the future, held by a process whose pid cannot be checked here) is watched
 * for up to that long: alive as soon as the heartbeat changes, dead once it stayed unchanged for the stale time.
 */
export async function judgeLiveness(runDir: string, options: { staleMs?: number; watchMs?: number; signal?: AbortSignal } = {}): Promise<Liveness> {
  const staleMs = options.staleMs ?? DEFAULT_LOCK_STALE_MS;
  const until = performance.now() + (options.watchMs ?? 0);
  let first: string | undefined;
  for (;;) {
    const lock = await readLockHolder(runDir, { staleMs });
    if (!lock.held) return { verdict: "none", by: "free", lockDir: lock.lockDir, holder: null };
    const j = judgeHeld({ lockDir: lock.lockDir, names: lock.names, holder: lock.holder, mtimeMs: lock.mtimeMs, staleMs });
    const out = { lockDir: lock.lockDir, holder: lock.holder };
    if (first !== undefined && j.heartbeat !== first && j.verdict === "live") return { verdict: "live", by: "heartbeat", ...out };
    const left = until - performance.now();
    if (j.watchMs === 0 || left <= 0 || options.signal?.aborted === true) return { verdict: j.verdict, by: j.by, ...out };
    first ??= j.heartbeat;
    await sleep(Math.min(POLL_MS, left, j.watchMs + 1));
  }
}
