/**
 * The default command runner of verification: one shell per command, stdout and stderr captured together
 * (only a bounded tail is kept), killed as a whole process group on abort or timeout so a test runner's
 * workers do not outlive it.
 */
import { spawn } from "node:child_process";
import { workflowError } from "@phasekit/core";

/** One command to run. */
export interface CommandRunRequest {
  command: string;
  cwd: string;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

/** Why a command did not pass. */
export type CommandFailureReason = "exit" | "signal" | "timeout" | "aborted" | "spawn-error";

/** The outcome of one command run; `output` is the combined stdout+stderr tail. */
export type CommandRunResult =
  | { ok: true; output: string; durationMs: number }
  | { ok: false; output: string; durationMs: number; reason: CommandFailureReason; exitCode: number | null; signal: string | null };

/** Runs one verification command; injectable so tests and hosts can replace the shell. */
export type CommandRunner = (request: CommandRunRequest) => Promise<CommandRunResult>;

/** Options of `createShellCommandRunner`. */
export interface ShellCommandRunnerOptions {
  /** The shell and its flags; the command is appended. Default `sh -c` (`cmd.exe /d /s /c` on Windows). */
  shell?: readonly string[];
  env?: NodeJS.ProcessEnv;
  /** Bytes of output kept (the end of it). Default 256 KiB. */
  maxOutputBytes?: number;
  /** Time between SIGTERM and SIGKILL when stopping a command. Default 2 s. */
  killGraceMs?: number;
}

// `sh -c` rather than `bash -lc`: a login shell re-reads profiles that may reset PATH (dropping node_modules/.bin)
// and print banners into the output; hosts that want it pass `shell: ["bash", "-lc"]`.
const DEFAULT_SHELL: readonly string[] = process.platform === "win32" ? [process.env.ComSpec ?? "cmd.exe", "/d", "/s", "/c"] : ["sh", "-c"];

/** Keeps the last `max` bytes written to it. */
function tailBuffer(max: number) {
  const chunks: Buffer[] = [];
  let size = 0;
  return {
    push(chunk: Buffer): void {
      chunks.push(chunk);
      size += chunk.length;
      while (size - (chunks[0]?.length ?? 0) >= max && chunks.length > 1) size -= chunks.shift()?.length ?? 0;
    },
    text(): string {
      const all = Buffer.concat(chunks);
      // Cutting at a byte offset can split a UTF-8 sequence; the decoder turns that stub into U+FFFD.
      return all.subarray(Math.max(0, all.length - max)).toString("utf8");
    },
  };
}

/** A runner that executes each command through a shell with `child_process.spawn`. */
export function createShellCommandRunner(options: ShellCommandRunnerOptions = {}): CommandRunner {
  const shell = options.shell ?? DEFAULT_SHELL;
  const [file, ...flags] = shell;
  if (file === undefined) {
    throw workflowError("verification", "INVALID_OPTIONS", "shell must name a program, got an empty list.", { field: "shell", value: shell, hint: 'e.g. ["sh", "-c"]' });
  }
  const maxOutput = options.maxOutputBytes ?? 256 * 1024;
  const grace = options.killGraceMs ?? 2_000;
  const groups = process.platform !== "win32";

  return (request) =>
    new Promise<CommandRunResult>((resolve) => {
      const started = Date.now();
      const out = tailBuffer(maxOutput);
      let stopReason: "timeout" | "aborted" | undefined;
      let settled = false;
      const child = spawn(file, [...flags, request.command], { cwd: request.cwd, env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"], detached: groups, windowsHide: true });
      child.stdout.on("data", (c: Buffer) => out.push(c));
      child.stderr.on("data", (c: Buffer) => out.push(c));

      const kill = (sig: NodeJS.Signals): void => {
        try {
          if (groups && child.pid !== undefined) process.kill(-child.pid, sig);
          else child.kill(sig);
        } catch {
          // already gone
        }
      };
      const stop = (reason: "timeout" | "aborted"): void => {
        if (settled || stopReason !== undefined) return;
        stopReason = reason;
        kill("SIGTERM");
        setTimeout(() => kill("SIGKILL"), grace).unref();
      };
      const onAbort = (): void => stop("aborted");
      const timer = setTimeout(() => stop("timeout"), request.timeoutMs);
      timer.unref();
      request.signal?.addEventListener("abort", onAbort, { once: true });
      if (request.signal?.aborted) onAbort();

      const finish = (result: CommandRunResult): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        request.signal?.removeEventListener("abort", onAbort);
        resolve(result);
      };
      child.on("error", (error) => {
        finish({ ok: false, output: `${out.text()}${error.message}`, durationMs: Date.now() - started, reason: "spawn-error", exitCode: null, signal: null });
      });
      // Background processes the command left behind would hold the pipes open (and outlive the check): end them.
      child.on("exit", () => {
        if (groups && stopReason === undefined) kill("SIGTERM");
      });
      child.on("close", (code, sig) => {
        const durationMs = Date.now() - started;
        const output = out.text();
        if (stopReason !== undefined) finish({ ok: false, output, durationMs, reason: stopReason, exitCode: code, signal: sig });
        else if (code === 0) finish({ ok: true, output, durationMs });
        else finish({ ok: false, output, durationMs, reason: sig === null ? "exit" : "signal", exitCode: code, signal: sig });
      });
    });
}
