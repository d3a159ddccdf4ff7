/**
 * proper-lockfile, loaded on the first lock and without its side effect. Its module body calls signal-exit, which
 * installs handlers for SIGINT, SIGTERM, SIGXFSZ and a dozen more: a process that inherited SIGXFSZ ignored (so
 * that a write past `ulimit -f` fails with EFBIG) was killed by SIGXFSZ instead. So the package is never imported
 * at load time (`sideEffects: false` holds), and its signal-exit copy is made inert before proper-lockfile's body
 * runs (below), so no handler is ever installed. The lock's exit cleanup is done by the lock itself with an `exit`
 * listener that exists only while a lock is held (see plan-lock.ts); a holder killed by a signal leaves a lock
 * whose dead pid the next contender recognizes (same host, boot and pid namespace).
 *
 * Two layouts: installed (node_modules beside this file: the copy on disk is preloaded inert through `require`),
 * and bundled (esbuild and the like inline the `import()` below, and nothing is on disk beside the bundle: the
 * inlined signal-exit sees the same hidden `process.reallyExit` while the inlined body runs). When neither loads,
 * the error is DEPENDENCY_MISSING naming the module and the layout, never a file-system error.
 */
import { createRequire } from "node:module";
import type properLockfile from "proper-lockfile";
import { workflowError } from "@phasekit/core";

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
  const onDisk = requireBesideUs();
  const emit = process.emit;
  let mod: ProperLockfile;
  try {
    // Installed: a synchronous require, which finds the inert signal-exit in the require cache. Bundled (nothing
    // on disk beside us): the bundler inlined the import below, whose body must run while signal-exit's "is
    // process usable" check fails. A bundle that has a node_modules nearby takes the installed path: either works.
    const imported = onDisk !== null ? withoutReallyExit(() => onDisk("proper-lockfile") as unknown) : await withoutReallyExit(() => import("proper-lockfile"));
    mod = ((imported as { default?: ProperLockfile }).default ?? imported) as ProperLockfile;
  } catch (error) {
    throw missing(error, onDisk === null ? "it is not installed beside @phasekit/adapters-pi, and no bundle includes it" : "it is installed but did not load");
  }
  // Fallback when another package had loaded that copy for real first: unload what proper-lockfile added. This
  // removes its handlers, but Node then resets those signals to their defaults, so the preload above is the fix.
  if (process.emit !== emit && onDisk !== null) (onDisk("signal-exit") as { unload?: () => void }).unload?.();
  return mod;
}

/**
 * proper-lockfile's own `require`, with its signal-exit copy preloaded inert; null when proper-lockfile is not on
 * disk beside this file (a bundle, whose `import.meta.url` may even be empty in a CommonJS one).
 */
function requireBesideUs(): ((id: string) => unknown) | null {
  let fromHere: NodeRequire;
  let fromLockfile: NodeRequire;
  try {
    fromHere = createRequire(import.meta.url);
    fromLockfile = createRequire(fromHere.resolve("proper-lockfile"));
    // A resolve that fails here (signal-exit not found from proper-lockfile's real path) falls back to import(),
    // whose failure names the module (DEPENDENCY_MISSING) instead of surfacing as a file-system error.
    preloadInertSignalExit(fromLockfile);
  } catch {
    return null;
  }
  return (id) => (id === "proper-lockfile" ? fromHere(id) : fromLockfile(id));
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
  void withoutReallyExit(() => fromLockfile(id));
}

// A bundle's `import()` of an inlined module runs its body in the next microtask, with no I/O in between, so the
// hidden window is that short; the installed path hides it only around a synchronous `require`.
function withoutReallyExit<T>(fn: () => T): T {
  const proc = process as unknown as { reallyExit: unknown };
  const reallyExit = proc.reallyExit;
  proc.reallyExit = undefined;
  let result: T;
  try {
    result = fn();
  } catch (error) {
    proc.reallyExit = reallyExit;
    throw error;
  }
  if (result instanceof Promise) return result.finally(() => (proc.reallyExit = reallyExit)) as T;
  proc.reallyExit = reallyExit;
  return result;
}

function missing(error: unknown, why: string): Error {
  return workflowError("lock", "DEPENDENCY_MISSING", `cannot load proper-lockfile, the library phasekit takes run locks with: ${why} (${error instanceof Error ? error.message : String(error)}).`, {
    value: "proper-lockfile",
    hint: "install @phasekit/adapters-pi with its dependencies (npm/pnpm install); a bundler must inline proper-lockfile and signal-exit (esbuild does with bundle: true) or leave @phasekit/adapters-pi external",
  }, error);
}
