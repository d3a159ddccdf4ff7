/** Spawns a helper child and resolves lines of its stdout as they arrive. */
import { spawn, type ChildProcess } from "node:child_process";

export interface Child {
  proc: ChildProcess;
  lines: string[];
  /** Resolves when a line matching `pattern` has been printed (rejects if the child exits first). */
  waitFor(pattern: RegExp): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

/** Starts `node <script> ...args` (or any command when `command` is given). */
export function spawnChild(script: string, args: string[], command?: { file: string; args: string[] }): Child {
  const proc = command ? spawn(command.file, command.args, { stdio: ["ignore", "pipe", "pipe"] }) : spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  let buffer = "";
  let stderr = "";
  const waiters: Array<{ pattern: RegExp; resolve: (l: string) => void; reject: (e: Error) => void }> = [];
  proc.stdout?.setEncoding("utf8");
  proc.stderr?.setEncoding("utf8");
  proc.stderr?.on("data", (d: string) => (stderr += d));
  proc.stdout?.on("data", (d: string) => {
    buffer += d;
    let nl: number;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      lines.push(line);
      for (const w of [...waiters]) {
        if (w.pattern.test(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
  });
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
    waitFor(pattern) {
      const seen = lines.find((l) => pattern.test(l));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => waiters.push({ pattern, resolve, reject }));
    },
  };
}
