/**
 * proper-lockfile, loaded on the first lock and without its side effect. Its module body calls signal-exit, which
 * installs handlers for SIGINT, SIGTERM, SIGXFSZ and a dozen more: a process that inherited SIGXFSZ ignored (so
 * that a write past `ulimit -f` fails with EFBIG) was killed by SIGXFSZ instead. So the package is never imported
 * at load time (`sideEffects: false` holds), and its signal-exit copy is loaded first in its inert form (below),
 * so no handler is ever installed. The lock's exit cleanup is done by the
 * lock itself with an `exit` listener that exists only while a lock is held (see plan-lock.ts); a holder killed
 * by a signal leaves a lock whose dead pid the next contender recognizes (same host, boot and pid namespace).
 */
import { createRequire } from "node:module";
import type properLockfile from "proper-lockfile";

/** The proper-lockfile module. */
export type ProperLockfile = typeof properLockfile;

let loading: Promise<ProperLockfile> | undefined;

/** Loads proper-lockfile once, leaving the process's signal handling as it was before. */
export function loadProperLockfile(): Promise<ProperLockfile> {
  return (loading ??= load().catch((error: unknown) => {
    loading = undefined;
    throw error;
  }));
}

async function load(): Promise<ProperLockfile> {
  const fromHere = createRequire(import.meta.url);
  const fromLockfile = createRequire(fromHere.resolve("proper-lockfile"));
  preloadInertSignalExit(fromLockfile);
  const emit = process.emit;
  const mod = ((await import("proper-lockfile")) as unknown as { default: ProperLockfile }).default;
  // Fallback when another package had loaded that copy for real first: unload what proper-lockfile added. This
  // removes its handlers, but Node then resets those signals to their defaults, so the preload above is the fix.
  if (process.emit !== emit) (fromLockfile("signal-exit") as { unload?: () => void }).unload?.();
  return mod;
}

/**
 * Removing a signal listener cannot restore an inherited SIG_IGN (Node resets the signal to SIG_DFL), so the
 * handlers must never be installed. signal-exit 3 checks at load whether `process` looks usable and exports a
 * no-op when it does not: load proper-lockfile's copy once, synchronously, with `process.reallyExit` hidden, so
 * the copy proper-lockfile then requires from the module cache is that no-op.
 */
function preloadInertSignalExit(fromLockfile: NodeRequire): void {
  const id = fromLockfile.resolve("signal-exit");
  if (fromLockfile.cache[id] !== undefined) return;
  const proc = process as unknown as { reallyExit: unknown };
  const reallyExit = proc.reallyExit;
  proc.reallyExit = undefined;
  try {
    fromLockfile(id);
  } finally {
    proc.reallyExit = reallyExit;
  }
}
