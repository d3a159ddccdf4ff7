/**
 * The lifecycle's hooks, each guarded: a hook that throws is reported and never hides the body's error or
 * skips the next cleanup step.
 */
import { workflowError, type WorkflowError } from "@phasekit/core";

/** Names of the lifecycle hooks, as reported in HOOK_FAILED errors. */
export type HookName =
  | "promptForResume"
  | "onLockHeld"
  | "createReporter"
  | "resolveBaseline"
  | "onSuccess"
  | "onError"
  | "beforeReporterDispose"
  | "reporterDispose"
  | "afterReporterDispose"
  | "lockRelease"
  | "afterLockRelease";

/** A hook failure: which hook, and the HOOK_FAILED error wrapping what it threw. */
export interface HookFailure {
  hook: HookName;
  error: WorkflowError;
}

/** Wraps whatever a hook threw in a HOOK_FAILED error naming the hook and the run. */
export function hookError(hook: HookName, slug: string, cause: unknown): WorkflowError {
  const text = cause instanceof Error ? cause.message : String(cause);
  return workflowError("run", "HOOK_FAILED", `run ${slug}: the ${hook} hook failed: ${text}`, { hook, value: text }, cause);
}

/** Runs one hook; returns its failure instead of throwing. */
export async function guarded(hook: HookName, slug: string, fn: (() => unknown) | undefined): Promise<HookFailure | null> {
  if (fn === undefined) return null;
  try {
    await fn();
    return null;
  } catch (cause) {
    return { hook, error: hookError(hook, slug, cause) };
  }
}

/** Default sink of hook failures that have nowhere else to go: one line on stderr. */
export function reportHookFailure(failure: HookFailure): void {
  process.stderr.write(`${failure.error.message}\n`);
}
