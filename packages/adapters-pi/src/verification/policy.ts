/**
 * Runs a resolved verification policy's commands in order: a command whose key passed before is skipped and
 * reported as cached; others run with retries up to `maxAttempts`; the first command that still fails stops
 * the policy and its output tail is returned. A pass is recorded under the key of the state it ran against.
 */
import type { VerificationCache } from "./cache.js";
import type { VerificationPolicy, VerificationStage } from "./config.js";
import { captureWorkspaceState, verificationKey } from "./fingerprint.js";
import type { WorkspaceState, WorkspaceStateOptions } from "./fingerprint.js";
import { createShellCommandRunner } from "./runner.js";
import type { CommandFailureReason, CommandRunner } from "./runner.js";

/** Characters of output kept in a failure. */
export const OUTPUT_TAIL_CHARS = 4_000;

/** Where the policy reports progress (a `Reporter` fits). */
export interface VerificationReporter {
  info(text: string, options?: { id?: string }): unknown;
  warning(text: string, options?: { id?: string }): unknown;
  error(text: string, options?: { id?: string }): unknown;
}

/** Options of `runVerificationPolicy`. */
export interface RunVerificationPolicyOptions {
  policy: VerificationPolicy;
  cwd: string;
  tool: string;
  phase?: string | undefined;
  cache: VerificationCache;
  runCommand?: CommandRunner;
  reporter?: VerificationReporter;
  signal?: AbortSignal;
  /** Bounds and exclusions of the workspace hash (the cache file is always excluded), and a replacement capture for tests. */
  fingerprint?: WorkspaceStateOptions & { capture?: (cwd: string) => Promise<WorkspaceState> };
}

/** What happened to one command. `key` is null when no cache key could be made (or the cache is off). */
export interface VerificationCommandResult {
  stage: VerificationStage;
  command: string;
  status: "passed" | "cached" | "failed";
  attempts: number;
  key: string | null;
}

/** The command that stopped the policy. */
export interface VerificationFailure {
  stage: VerificationStage;
  command: string;
  attempts: number;
  reason: CommandFailureReason;
  exitCode: number | null;
  /** The last 4,000 characters of the last attempt's combined output. */
  outputTail: string;
}

/** The outcome of a policy run; `skipped` says why nothing ran (timing off, or agent-only mode). */
export type VerificationOutcome =
  | { ok: true; results: VerificationCommandResult[]; skipped?: "timing-off" | "agent-only" }
  | { ok: false; failed: VerificationFailure; results: VerificationCommandResult[] };

/** The last `max` UTF-16 units of `text`, never starting with the second half of a surrogate pair. */
export function outputTail(text: string, max: number = OUTPUT_TAIL_CHARS): string {
  if (text.length <= max) return text;
  const tail = text.slice(text.length - max);
  const first = tail.charCodeAt(0);
  return first >= 0xdc00 && first <= 0xdfff ? tail.slice(1) : tail;
}

type Run = { ok: true; attempts: number } | { ok: false; failure: VerificationFailure };

async function runWithRetries(o: RunVerificationPolicyOptions, runner: CommandRunner, stage: VerificationStage, command: string): Promise<Run> {
  const max = o.policy.maxAttempts;
  for (let attempt = 1; ; attempt++) {
    const r = await runner({ command, cwd: o.cwd, timeoutMs: o.policy.timeoutMs, signal: o.signal });
    if (r.ok) return { ok: true, attempts: attempt };
    // An abort is the caller's decision, not a flaky check: it is never retried.
    if (attempt >= max || r.reason === "aborted" || o.signal?.aborted) {
      return { ok: false, failure: { stage, command, attempts: attempt, reason: r.reason, exitCode: r.exitCode, outputTail: outputTail(r.output) } };
    }
    o.reporter?.warning(`${command} failed (${r.reason}${r.exitCode === null ? "" : ` ${r.exitCode}`}), retrying ${attempt + 1}/${max}`, { id: `verify:${command}` });
  }
}

// A cache that cannot be read is a miss: the command runs, which is always safe.
async function cacheHas(o: RunVerificationPolicyOptions, key: string): Promise<boolean> {
  try {
    return await o.cache.has(key);
  } catch (error) {
    o.reporter?.warning(`verification cache unreadable, running anyway: ${error instanceof Error ? error.message : String(error)}`, { id: "verify:cache" });
    return false;
  }
}

/** Runs the policy's commands; see the module comment for the rules. Never throws for a failing command. */
export async function runVerificationPolicy(o: RunVerificationPolicyOptions): Promise<VerificationOutcome> {
  const { policy, reporter } = o;
  if (policy.timing === "off") return { ok: true, results: [], skipped: "timing-off" };
  if (policy.mode === "agent") return { ok: true, results: [], skipped: "agent-only" };
  const runner = o.runCommand ?? createShellCommandRunner();
  const exclude = [...(o.fingerprint?.exclude ?? []), ...(o.cache.file === undefined ? [] : [o.cache.file])];
  const capture = o.fingerprint?.capture ?? ((cwd: string) => captureWorkspaceState(cwd, { ...o.fingerprint, exclude }));
  const cacheOn = policy.cache !== "off" && o.cache.mode !== "off";
  const results: VerificationCommandResult[] = [];
  // One capture serves every command until one actually runs: a command (lint --fix, codegen) may change the tree.
  let state: WorkspaceState | undefined;

  for (const { stage, command } of policy.commands) {
    if (o.signal?.aborted) {
      return { ok: false, results, failed: { stage, command, attempts: 0, reason: "aborted", exitCode: null, outputTail: "" } };
    }
    let key: string | null = null;
    if (cacheOn) {
      state ??= await capture(o.cwd);
      if (state.ok) key = verificationKey({ command, cwd: o.cwd, tool: o.tool, phase: o.phase }, state);
      else reporter?.info(`no cache key (${state.reason}): ${command} runs`, { id: `verify:${command}` });
      if (key !== null && (await cacheHas(o, key))) {
        results.push({ stage, command, status: "cached", attempts: 0, key });
        reporter?.info(`cached pass, skipped: ${command}`, { id: `verify:${command}` });
        continue;
      }
    }
    state = undefined;
    reporter?.info(`verifying: ${command}`, { id: `verify:${command}` });
    const run = await runWithRetries(o, runner, stage, command);
    if (!run.ok) {
      results.push({ stage, command, status: "failed", attempts: run.failure.attempts, key });
      reporter?.error(`verification failed: ${command} (${run.failure.reason}, ${run.failure.attempts} attempt(s))`, { id: `verify:${command}` });
      return { ok: false, failed: run.failure, results };
    }
    results.push({ stage, command, status: "passed", attempts: run.attempts, key });
    reporter?.info(`passed: ${command}`, { id: `verify:${command}` });
    if (key !== null) {
      // A cache that cannot be written costs a re-run next time, not this verification.
      await o.cache.record({ key, command, tool: o.tool, phase: o.phase ?? null }).catch((error: unknown) => {
        reporter?.warning(`verification cache not updated: ${error instanceof Error ? error.message : String(error)}`, { id: "verify:cache" });
      });
    }
  }
  return { ok: true, results };
}
