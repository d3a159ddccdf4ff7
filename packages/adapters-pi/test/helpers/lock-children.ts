/** Spawns plain-node lock helpers with a writable stdin and collects their stdout lines. */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

/** A running helper: its process, its lines so far, and a way to wait for a line. */
export interface LockChild {
  proc: ChildProcess;
  lines: string[];
  send(line: string): void;
  /** Closes the child's stdin (helpers exit when it ends). */
  end(): void;
  /** Resolves with the first line (from now on, or already seen when `seen` is true) matching `pattern`. */
  next(pattern: RegExp, seen?: boolean): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

/** Absolute path of a helper script in this folder. */
export function helperPath(name: string): string {
  return fileURLToPath(new URL(`./${name}`, import.meta.url));
}

/** Starts `node test/helpers/<name> ...args`. */
export function spawnLockChild(name: string, args: string[]): LockChild {
  const proc = spawn(process.execPath, [helperPath(name), ...args], { stdio: ["pipe", "pipe", "pipe"] });
  const lines: string[] = [];
  const waiters: Array<{ pattern: RegExp; from: number; resolve: (l: string) => void; reject: (e: Error) => void }> = [];
  let buffer = "";
  let stderr = "";
  proc.stderr?.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  proc.stdout?.setEncoding("utf8").on("data", (d: string) => {
    buffer += d;
    for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
      lines.push(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
      settle();
    }
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
  return {
    proc,
    lines,
    exited,
    send: (line) => void proc.stdin?.write(`${line}\n`),
    end: () => void proc.stdin?.end(),
    next(pattern, seen = false) {
      return new Promise((resolve, reject) => {
        waiters.push({ pattern, from: seen ? 0 : lines.length, resolve, reject });
        settle();
      });
    },
  };
}
