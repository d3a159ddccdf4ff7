/**
 * `recoverRuns`: at start, resume the runs a dead process left `running` (DBOS's recovery model). It lists the
 * store's runs and hands each `running` one the caller's filter accepts to `runWorkflow` with the caller's body,
 * one after another. Whether the holder is dead is the lock's own rule, not a second one: `runWorkflow` takes the
 * lock (a dead holder's lock is taken over, a live holder's is refused with LOCKED, reported as `held`).
 */
import { isWorkflowError, type WorkflowError } from "@phasekit/core";
import { runWorkflow } from "./run-workflow.js";
import type { RunContext } from "./context-types.js";
import type { RunResult, RunWorkflowOptions } from "./options.js";
import { createFsPlanStore } from "../store/plan-store.js";
import type { WorkflowMetadata } from "../store/metadata-schema.js";

/** Options of `recoverRuns`: those of `runWorkflow` (without `target`), and which runs to take. */
export interface RecoverRunsOptions<T> extends Omit<RunWorkflowOptions<T>, "target"> {
  /** Which `running` runs to recover; default: those whose owner tool is `toolName` (others are another tool's). */
  filter?: ((run: { slug: string; metadata: WorkflowMetadata }) => boolean) | undefined;
}

/** What happened to one run `recoverRuns` tried. */
export type RecoveredRun<T> =
  | { slug: string; outcome: "resumed"; result: RunResult<T> }
  /** Its holder is alive (another process is running it): left alone. */
  | { slug: string; outcome: "held"; error: WorkflowError }
  /** The resumed run threw (its body, a hook, the store): the error as `runWorkflow` threw it. */
  | { slug: string; outcome: "failed"; error: unknown };

/**
 * Resumes every `running` run (of `toolName`, or as `filter` says) whose holder died, with `body`, one at a time,
 * and reports each. Paused, finished and failed runs are not touched; a run another live process holds is `held`.
 */
export async function recoverRuns<T>(options: RecoverRunsOptions<T>, body: (ctx: RunContext) => Promise<T>): Promise<RecoveredRun<T>[]> {
  const { filter, ...runOptions } = options;
  const own = options.store === undefined;
  const store = options.store ?? createFsPlanStore({ repoRoot: options.repoRoot, planRoot: options.planRoot, homeDir: options.homeDir, fs: options.fs });
  const take = filter ?? ((run: { metadata: WorkflowMetadata }) => run.metadata.ownerTool === options.toolName);
  try {
    const candidates = (await store.list()).flatMap((e) => (e.ok && e.metadata !== null && e.metadata.status === "running" && take({ slug: e.slug, metadata: e.metadata }) ? [e.slug] : []));
    const report: RecoveredRun<T>[] = [];
    for (const slug of candidates) {
      try {
        // No retries: a live holder means the run is not ours to recover, now or in a moment.
        const lock = { ...runOptions.lock, retries: 0 };
        report.push({ slug, outcome: "resumed", result: await runWorkflow({ ...runOptions, lock, target: slug, store }, body) });
      } catch (error) {
        report.push(isWorkflowError(error) && error.code === "LOCKED" ? { slug, outcome: "held", error } : { slug, outcome: "failed", error });
      }
    }
    return report;
  } finally {
    if (own) await store.close();
  }
}
