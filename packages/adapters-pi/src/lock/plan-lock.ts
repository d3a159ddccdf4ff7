/**
 * The plan lock: one holder per run folder, across processes. proper-lockfile keeps the lock fresh and notices
 * when it is lost; `files.ts` makes creation, stale takeover and release identity-safe. A lost lock never
 * throws from a timer: it aborts the holder's `signal` with a LOCK_LOST error, and the holder's next write is
 * refused anyway by workflow.json's generation check.
 */
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { promises as fsp } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { loadProperLockfile } from "./lockfile-loader.js";
import { isWorkflowError, workflowError, type Result, type WorkflowError } from "@phasekit/core";
import { fsErrorCode } from "../io/fs-port.js";
import { createLockFs, type LockFsState } from "./files.js";
import { awaitOverdueRefresh, refreshOverdue } from "./heartbeat.js";
import { busyError, ioError, junkError, notOwnedError, type LockErrorContext } from "./errors.js";
import { processIdentity } from "../io/process-space.js";
import { DEFAULT_LOCK_STALE_MS, holderFileName, lockDirOf, type LockHolder, type LockOwner } from "./holder.js";

const SCOPE = "lock";
// proper-lockfile clamps stale to ≥ 2 s and its refresh to [1 s, stale / 2]; refuse values it would change.
const MIN_STALE_MS = 2_000;
const MIN_UPDATE_MS = 1_000;

/** Options of `acquirePlanLock`. */
export interface AcquirePlanLockOptions {
  /** The run folder (must exist); the lock is `<runDir>/.lock`. */
  runDir: string;
  owner: LockOwner;
  /** A lock not refreshed for this long may be taken over (default 10 s, at least 2 s). */
  staleMs?: number;
  /** How often the holder refreshes the lock (default staleMs / 2; between 1 s and staleMs / 2). */
  updateMs?: number;
  /** Further attempts while the lock is busy, with jittered exponential back-off (default 0). */
  retries?: number;
  /** Stops waiting for a busy lock. */
  signal?: AbortSignal;
  /** Clock for the holder's `since` (default the system clock). */
  now?: () => Date;
}

/** Outcome of `release()`: released (or already released), or LOCK_NOT_OWNED when it had been taken over. */
export type ReleasePlanLockOutcome = { ok: true; released: boolean } | { ok: false; error: WorkflowError };

/** A held plan lock. */
export interface PlanLock {
  readonly runDir: string;
  readonly lockDir: string;
  readonly holder: LockHolder;
  /** The stale holder this acquisition took the lock from, if any. */
  readonly tookOverFrom: LockHolder | null;
  /** Aborted with a LOCK_LOST WorkflowError (as `reason`) when the lock is lost. */
  readonly signal: AbortSignal;
  /** Throws LOCK_LOST unless the lock is still ours (an overdue refresh is awaited first); call it before a write. */
  assertHeld(): Promise<void>;
  /**
   * Right before work nobody else may do at the same time (a step's body): undefined at once, with no I/O, while
   * the heartbeat is fresh (`refreshOverdue`: no contender can have taken the lock); else `assertHeld()`, which
   * rejects with LOCK_LOST when it was taken meanwhile (a holder woken from SIGSTOP or a starved event loop).
   */
  stillHolding(): Promise<void> | undefined;
  /** Releases the lock if it is still ours; never removes another holder's lock. */
  release(): Promise<ReleasePlanLockOutcome>;
}

interface Settings extends LockErrorContext {
  runDir: string;
  lockDir: string;
  owner: Required<LockOwner>;
  staleMs: number;
  updateMs: number;
  retries: number;
  signal: AbortSignal | undefined;
  now: () => Date;
}

/** Acquires the plan lock of `runDir`, or returns LOCKED naming the holder. Throws INVALID_OPTIONS at once. */
export async function acquirePlanLock(options: AcquirePlanLockOptions): Promise<Result<{ lock: PlanLock }>> {
  const s = checkOptions(options);
  // One free watch per call: a lock that looks stale by its holder's clock is watched for up to its stale time
  // (plus a margin) before being judged; if its heartbeat changes meanwhile, the holder is alive (skewed clock).
  let watchBudgetMs = Math.max(s.staleMs, MAX_HOLDER_STALE_MS) + 500;
  let watching: string | undefined;
  for (let attempt = 0; ; attempt++) {
    if (s.signal?.aborted) return { ok: false, error: await busyError(s, "gave up waiting (aborted)") };
    const r = await attemptOnce(s);
    if (r.kind === "held") return { ok: true, lock: r.lock };
    if (r.kind === "error") return { ok: false, error: r.error };
    // A heartbeat that changed while watched belongs to a live holder: no second free watch.
    if (r.watchMs !== undefined && r.watchMs < watchBudgetMs && (watching === undefined || watching === r.heartbeat)) {
      watching = r.heartbeat;
      const wait = Math.max(50, r.watchMs + 50);
      watchBudgetMs -= wait;
      attempt--;
      try {
        await sleep(wait, undefined, s.signal ? { signal: s.signal } : undefined);
      } catch {
        return { ok: false, error: await busyError(s, "gave up waiting (aborted)") };
      }
      continue;
    }
    if (attempt >= s.retries) return { ok: false, error: await busyError(s, r.why) };
    try {
      await sleep(backoffMs(attempt), undefined, s.signal ? { signal: s.signal } : undefined);
    } catch {
      return { ok: false, error: await busyError(s, "gave up waiting (aborted)") };
    }
  }
}

type Attempt = { kind: "held"; lock: PlanLock } | { kind: "busy"; why: string; watchMs?: number; heartbeat?: string } | { kind: "error"; error: WorkflowError };

// The longest holder stale time a contender honours while watching (a holder may ask for more than ours).
const MAX_HOLDER_STALE_MS = 60_000;

async function attemptOnce(s: Settings): Promise<Attempt> {
  const holder: LockHolder = {
    schemaVersion: 1,
    token: randomBytes(16).toString("hex"),
    tool: s.owner.tool,
    pid: s.owner.pid,
    host: s.owner.host,
    since: s.now().toISOString(),
    staleMs: s.staleMs,
    ...processIdentity(),
  };
  const state: LockFsState = { acquired: false, lastRefreshMs: { mono: Number.NEGATIVE_INFINITY, wall: Number.NEGATIVE_INFINITY }, notOwned: false, tookOverFrom: null, watch: null };
  const controller = new AbortController();
  let compromised = false;
  const lose = (why: string, cause?: unknown) => {
    if (controller.signal.aborted) return;
    controller.abort(
      workflowError(SCOPE, "LOCK_LOST", `lost the lock on ${s.runDir}: ${why}.`, {
        file: s.lockDir,
        value: holder.token,
        hint: "stop writing: another process owns the run now; re-acquire the lock and re-read workflow.json",
      }, cause),
    );
  };
  let plRelease: () => Promise<void>;
  const lockFs = createLockFs({ lockDir: s.lockDir, holder, staleMs: s.staleMs, state });
  try {
    const lockfile = await loadProperLockfile();
    // proper-lockfile keeps its locks (and their refresh timers) in one process-wide table keyed by this path,
    // and its release drops whatever entry that key holds: keyed by the run, a displaced holder's late release
    // stopped the heartbeat of the next holder of the run in the same process. The key names this acquisition
    // (never touched on disk: lockfilePath is given and realpath is off).
    plRelease = await lockfile.lock(path.join(s.runDir, `.lock-key-${holder.token}`), {
      realpath: false,
      lockfilePath: s.lockDir,
      stale: s.staleMs,
      update: s.updateMs,
      retries: 0,
      fs: lockFs,
      onCompromised: (err) => {
        compromised = true;
        lose(`it was taken over or removed (${err.message})`, err);
      },
    });
  } catch (error) {
    const code = fsErrorCode(error);
    if (code === "ELOCKED" || code === "EEXIST") {
      return state.watch === null ? { kind: "busy", why: "it is held" } : { kind: "busy", why: "its heartbeat has not been watched for the stale time yet", watchMs: state.watch.remainingMs, heartbeat: state.watch.heartbeat };
    }
    if (code === "EJUNK") return { kind: "error", error: junkError(s, error) };
    // The loader's own error (DEPENDENCY_MISSING) names its cause; calling it a file-system failure would not.
    if (isWorkflowError(error)) return { kind: "error", error };
    return { kind: "error", error: ioError(s, error) };
  }
  await sweepLeftovers(s);
  let released = false;
  // Exit cleanup only while held (an `exit` listener changes no signal disposition): a normal exit with the lock
  // still held removes our own holder file and the lock directory, never another holder's.
  const onExit = () => lockFs.rmdirSync();
  process.on("exit", onExit);
  const lock: PlanLock = {
    runDir: s.runDir,
    lockDir: s.lockDir,
    holder,
    tookOverFrom: state.tookOverFrom,
    signal: controller.signal,
    async assertHeld() {
      if (!controller.signal.aborted && !released) {
        // A late refresh proves nothing (a starved event loop delays it as a pause does): await it. It renews only
        // if our holder file and mtime are intact, else it aborts `signal`; only a refresh that never comes is lost.
        const idle = await awaitOverdueRefresh(() => state.lastRefreshMs, s.staleMs, () => controller.signal.aborted || released);
        if (idle !== null) lose(`it was not refreshed for ${idle} ms (was the process paused?)`);
        else if (!controller.signal.aborted && !(await holderFileExists(s, holder.token))) lose("its holder file is gone (taken over)");
      }
      if (controller.signal.aborted) throw controller.signal.reason as WorkflowError;
      if (released) throw workflowError(SCOPE, "LOCK_LOST", `the lock on ${s.runDir} was already released.`, { file: s.lockDir });
    },
    stillHolding() {
      if (!controller.signal.aborted && !released && !refreshOverdue(state.lastRefreshMs, s.staleMs)) return undefined;
      return lock.assertHeld();
    },
    async release() {
      if (released) return { ok: true, released: false };
      released = true;
      process.removeListener("exit", onExit);
      if (compromised) return { ok: false, error: notOwnedError(s, holder) };
      try {
        // An abandoned lock no longer has proper-lockfile's entry: its own files are removed directly (never another's).
        if (state.abandoned === true) {
          state.abandoned = false;
          await new Promise<void>((resolve, reject) => lockFs.rmdir(s.lockDir, (e) => (e ? reject(e) : resolve())));
        } else await plRelease();
      } catch (error) {
        if (fsErrorCode(error) === "ERELEASED") return { ok: false, error: notOwnedError(s, holder) };
        return { ok: false, error: ioError(s, error) };
      }
      return state.notOwned ? { ok: false, error: notOwnedError(s, holder) } : { ok: true, released: true };
    },
  };
  // Stops the heartbeat and leaves the lock in place: it goes stale, and a contender takes it over then.
  abandoners.set(lock, async () => {
    if (released || compromised || state.abandoned === true) return;
    state.abandoned = true;
    await plRelease().catch(() => undefined);
  });
  return { kind: "held", lock };
}

const abandoners = new WeakMap<PlanLock, () => Promise<void>>();

/**
 * Stops refreshing `lock` without removing it, as a closed store gives its leases up on every store: nobody renews
 * it, so it goes stale and another process takes the run once its stale time has passed. Nothing is refused by
 * the lock itself (the store refuses the lease's writes); a later `release()` still removes it at once.
 */
export async function abandonPlanLock(lock: PlanLock): Promise<void> {
  await abandoners.get(lock)?.();
}

async function holderFileExists(s: Settings, token: string): Promise<boolean> {
  try {
    await fsp.lstat(path.join(s.lockDir, holderFileName(token)));
    return true;
  } catch (error) {
    if (fsErrorCode(error) === "ENOENT") return false;
    throw ioError(s, error);
  }
}

// A process killed mid-acquisition or mid-takeover leaves `.lock-new-*` / `.lock-stale-*` beside the lock.
// The holder sweeps those older than the stale time (younger ones may belong to a contender still running).
async function sweepLeftovers(s: Settings): Promise<void> {
  try {
    for (const name of await fsp.readdir(s.runDir)) {
      if (!name.startsWith(".lock-new-") && !name.startsWith(".lock-stale-")) continue;
      const p = path.join(s.runDir, name);
      const st = await fsp.lstat(p).catch(() => null);
      if (st !== null && Date.now() - st.mtimeMs > s.staleMs) await fsp.rm(p, { recursive: true, force: true });
    }
  } catch {
    // Best effort: leftovers cost a few bytes, never correctness.
  }
}

/** Full-jitter exponential back-off: a random wait in [base·1.6^n / 2, base·1.6^n], capped at 250 ms. */
function backoffMs(attempt: number): number {
  const cap = Math.min(250, 8 * 1.6 ** attempt);
  return cap / 2 + Math.random() * (cap / 2);
}

function checkOptions(o: AcquirePlanLockOptions): Settings {
  const bad = (field: string, value: unknown, hint: string) =>
    workflowError(SCOPE, "INVALID_OPTIONS", `acquirePlanLock: option ${field} is invalid (${JSON.stringify(value) ?? String(value)}).`, { field, value, hint });
  if (typeof o !== "object" || o === null) throw bad("options", o, "pass { runDir, owner: { tool } }");
  if (typeof o.runDir !== "string" || o.runDir === "" || o.runDir.includes("\0")) throw bad("runDir", o.runDir, "pass the run folder's path");
  if (typeof o.owner?.tool !== "string" || o.owner.tool.trim() === "") throw bad("owner.tool", o.owner?.tool, "name the tool that takes the lock");
  const staleMs = o.staleMs ?? DEFAULT_LOCK_STALE_MS;
  if (!Number.isInteger(staleMs) || staleMs < MIN_STALE_MS) throw bad("staleMs", o.staleMs, `use an integer ≥ ${MIN_STALE_MS}`);
  const updateMs = o.updateMs ?? Math.floor(staleMs / 2);
  if (!Number.isInteger(updateMs) || updateMs < MIN_UPDATE_MS || updateMs > staleMs / 2) {
    throw bad("updateMs", o.updateMs, `use an integer between ${MIN_UPDATE_MS} and staleMs / 2`);
  }
  const retries = o.retries ?? 0;
  if (!Number.isInteger(retries) || retries < 0) throw bad("retries", o.retries, "use an integer ≥ 0");
  if (o.now !== undefined && typeof o.now !== "function") throw bad("now", typeof o.now, "pass a function returning a Date");
  const owner = { tool: o.owner.tool, pid: o.owner.pid ?? process.pid, host: o.owner.host ?? os.hostname() };
  const runDir = path.resolve(o.runDir);
  return { runDir, lockDir: lockDirOf(runDir), owner, staleMs, updateMs, retries, signal: o.signal, now: o.now ?? (() => new Date()) };
}
