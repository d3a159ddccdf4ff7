/**
 * What every command writes through: stdout for results (text or versioned JSON), stderr for errors and
 * progress, and the exit codes the docs promise. Commands get a `CliIo` instead of `process` so tests can run
 * them in-process and the bin stays a two-line file.
 */
import { isWorkflowError, workflowError, type WorkflowErrorCode } from "@phasekit/core";

/** Exit codes (docs/cli.md): 0 done, 1 failed or problems found, 2 bad usage, 3 no such run or workflow, 4 busy. */
export const EXIT = { ok: 0, failed: 1, usage: 2, notFound: 3, busy: 4 } as const;

/** The process surface a command uses. */
export interface CliIo {
  stdout: { write(chunk: string): unknown };
  stderr: { write(chunk: string): unknown; isTTY?: boolean };
  /** `isTTY`: a terminal, where a command reading stdin must say so instead of waiting without a word. */
  stdin: AsyncIterable<Uint8Array | string> & { isTTY?: boolean };
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Clock for ages and gc (tests pin it). */
  now(): Date;
}

/** The CliIo of this process. */
export function processIo(): CliIo {
  // A reader that went away (`phasekit journal x | head -1`) is not an error of ours: end quietly, as `cat` does,
  // instead of an unhandled EPIPE with a stack trace.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0);
    throw error;
  });
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, cwd: process.cwd(), env: process.env, now: () => new Date() };
}

/** Name and version of every JSON document the CLI prints (a field `schema` in each). Bump on breaking change. */
export const JSON_SCHEMAS = {
  list: "phasekit.list/1",
  show: "phasekit.show/1",
  step: "phasekit.step-payload/1",
  why: "phasekit.why/1",
  journal: "phasekit.journal-entry/1",
  validate: "phasekit.validate/1",
  diagram: "phasekit.diagram/1",
  control: "phasekit.control/1",
  gc: "phasekit.gc/1",
  rm: "phasekit.rm/1",
  error: "phasekit.error/1",
} as const;

/** Prints a JSON document with its `schema` tag first. */
export function printJson(io: CliIo, schema: string, body: object, options: { compact?: boolean } = {}): void {
  io.stdout.write(`${JSON.stringify({ schema, ...body }, null, options.compact ? undefined : 2)}\n`);
}

/** A failure a command reports: a typed phasekit error and its exit code. */
export class CliFailure extends Error {
  constructor(
    readonly error: { code: string; message: string; details?: unknown },
    readonly exitCode: number,
  ) {
    super(error.message);
  }
}

/** Throws a bad-usage failure (exit 2, docs/cli.md): an option or argument value the command cannot take. */
export function usage(message: string, details: Record<string, unknown> = {}): never {
  throw new CliFailure({ code: "INVALID_OPTIONS", message, details }, exitCodeOf("INVALID_OPTIONS"));
}

/** Throws a CliFailure for a phasekit error code (`exitCodeOf`). */
export function fail(scope: string, code: WorkflowErrorCode, message: string, details: Record<string, unknown> = {}): never {
  throw toFailure(workflowError(scope, code, message, details));
}

/**
 * The exit code of a typed error, wherever it was thrown (a command's own check through `usage`, or the library
 * call it made): INVALID_OPTIONS is a value the command cannot take, bad usage (2); NOT_FOUND 3, LOCKED 4, else 1.
 */
export function exitCodeOf(code: string): number {
  return code === "INVALID_OPTIONS" ? EXIT.usage : code === "NOT_FOUND" ? EXIT.notFound : code === "LOCKED" ? EXIT.busy : EXIT.failed;
}

/** The exit code and printable error of anything a command threw. */
export function toFailure(error: unknown): CliFailure {
  if (error instanceof CliFailure) return error;
  if (isWorkflowError(error)) return new CliFailure({ code: error.code, message: error.message, details: error.details }, exitCodeOf(error.code));
  const message = error instanceof Error ? error.message : String(error);
  return new CliFailure({ code: "INTERNAL", message }, EXIT.failed);
}

/** Prints a failure on stderr: one readable line (plus the hint), or the JSON error document with `--json`. */
export function printFailure(io: CliIo, failure: CliFailure, json: boolean): void {
  if (json) {
    io.stderr.write(`${JSON.stringify({ schema: JSON_SCHEMAS.error, error: failure.error, exitCode: failure.exitCode })}\n`);
    return;
  }
  io.stderr.write(`phasekit: ${plainMessage(failure.error.message)}\n`);
}

/** A typed error's message without its `[phasekit] [scope] ` tags, for a sentence that quotes it. */
export function plainMessage(message: string): string {
  return message.replace(/^(\[[^\]]*\] )+/, "");
}

/** A one-line progress counter on a TTY (stderr), silent when piped; `done()` clears the line. */
export function progress(io: CliIo, label: string): { tick(n: number, total?: number): void; done(): void } {
  if (io.stderr.isTTY !== true) return { tick() {}, done() {} };
  let last = 0;
  let shown = false;
  return {
    tick(n, total) {
      const t = Date.now();
      if (n > 0 && t - last < 100) return;
      last = t;
      shown = true;
      io.stderr.write(`\r${label}${n > 0 ? ` ${n}` : ""}${total === undefined ? "" : `/${total}`}`);
    },
    done() {
      if (shown) io.stderr.write("\r\x1b[K");
    },
  };
}
