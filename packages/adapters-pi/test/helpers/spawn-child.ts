/** Spawns a helper child and resolves lines of its stdout as they arrive; the one child harness of the tests. */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";

/** A running child: its process, its stdout lines so far, ways to wait for a line and to talk to its stdin. */
export interface LineChild {
  proc: ChildProcess;
  lines: string[];
  send(line: string): void;
  /** Closes the child's stdin (helpers that read it exit when it ends). */
  end(): void;
  /** Resolves with the first line (from now on, or already seen when `seen` is true) matching `pattern`. */
  next(pattern: RegExp, seen?: boolean): Promise<string>;
  /** Resolves with the first line printed so far or later that matches `pattern` (rejects if the child exits first). */
  waitFor(pattern: RegExp): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

/** The older name of `LineChild`, kept for the tests that use it. */
export type Child = LineChild;

/** Starts `file ...args` with piped stdio and collects its stdout lines. */
export function spawnLines(file: string, args: readonly string[]): LineChild {
  const proc = spawn(file, [...args], { stdio: ["pipe", "pipe", "pipe"] });
  const lines: string[] = [];
  const waiters: Array<{ pattern: RegExp; from: number; resolve: (l: string) => void; reject: (e: Error) => void }> = [];
  let buffer = "";
  let stderr = "";
  proc.stdin?.on("error", () => undefined); // a child killed early closes its stdin under us
  proc.stderr?.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  proc.stdout?.setEncoding("utf8").on("data", (d: string) => {
    buffer += d;
    for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
      lines.push(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
    }
    settle();
  });
  function settle(): void {
    for (const w of [...waiters]) {
      const hit = lines.slice(w.from).find((l) => w.pattern.test(l));
      if (hit !== undefined) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(hit);
      }
    }
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => {
    proc.on("close", (code, signal) => {
      for (const w of waiters.splice(0)) w.reject(new Error(`child exited (${code ?? signal}) before printing ${w.pattern}: ${stderr}`));
      resolve({ code, signal, stderr });
    });
  });
  const next = (pattern: RegExp, seen = false): Promise<string> =>
    new Promise((resolve, reject) => {
      waiters.push({ pattern, from: seen ? 0 : lines.length, resolve, reject });
      settle();
    });
  return {
    proc,
    lines,
    exited,
    send: (line) => void proc.stdin?.write(`${line}\n`),
    end: () => void proc.stdin?.end(),
    next,
    waitFor: (pattern) => next(pattern, true),
  };
}

/** Starts `node <script> ...args` (or any command when `command` is given). */
export function spawnChild(script: string, args: string[], command?: { file: string; args: string[] }): LineChild {
  const child = command ? spawnLines(command.file, command.args) : spawnLines(process.execPath, [script, ...args]);
  child.end(); // these helpers never read stdin
  return child;
}

/**
 * Resolves once process `pid` is stopped (state T in /proc/<pid>/stat), looking every 5 ms for up to 30 s. A child
 * that prints a line and then SIGSTOPs itself is not stopped yet when its line arrives: a SIGCONT sent before the
 * stop lands is lost, and the child then stays stopped for good (a test waiting for its next line hangs).
 */
export async function untilStopped(pid: number): Promise<void> {
  for (let looks = 0; looks < 6_000; looks++) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      throw new Error(`process ${pid} ended before it stopped`);
    }
    // The state follows the command name, which may itself hold spaces and parentheses.
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    if (state === "T" || state === "t") return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`process ${pid} did not stop within 30 s`);
}
