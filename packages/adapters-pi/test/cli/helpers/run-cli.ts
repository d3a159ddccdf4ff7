/** Runs the `phasekit` bin (bin/phasekit.js → dist) as a user would, and parses what it prints. */
import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The bin file the package declares. */
export const BIN = fileURLToPath(new URL("../../../bin/phasekit.js", import.meta.url));

/** What one invocation gave. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `phasekit ...args` synchronously, with `input` on stdin. */
export function phasekit(args: readonly string[], options: { input?: string; cwd?: string } = {}): CliRun {
  const r = spawnSync(process.execPath, [BIN, ...args], { input: options.input ?? "", encoding: "utf8", cwd: options.cwd, env: { ...process.env, PI_CODING_AGENT_DIR: "/nonexistent-pi-dir" } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Runs `phasekit ...args` without blocking (for --follow while the test drives the run). */
export function phasekitAsync(args: readonly string[]): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Parses a `--json` document and checks its schema tag. */
export function json<T = Record<string, unknown>>(out: string, schema: string): T {
  const doc = JSON.parse(out) as { schema: string } & T;
  if (doc.schema !== schema) throw new Error(`expected schema ${schema}, got ${doc.schema}`);
  return doc;
}

/** Runs the CLI in this process (no node start-up): for the many small error cases; `env` adds to its environment. */
export async function phasekitInProcess(args: readonly string[], options: { input?: string; cwd?: string; tty?: boolean; now?: () => Date; env?: NodeJS.ProcessEnv } = {}): Promise<CliRun> {
  const { main } = await import("../../../src/cli/main.js");
  let stdout = "";
  let stderr = "";
  const input = options.input ?? "";
  const code = await main(args, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    stdin: Object.assign(
      (async function* () {
        yield input;
      })(),
      { isTTY: options.tty === true },
    ),
    cwd: options.cwd ?? process.cwd(),
    env: { PI_CODING_AGENT_DIR: "/nonexistent-pi-dir", ...options.env },
    now: options.now ?? (() => new Date()),
  });
  return { code, stdout, stderr };
}
