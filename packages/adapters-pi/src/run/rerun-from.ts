/**
 * `rerunFrom`: time travel in place. Under the run's lock (refused while it runs), one lease writes a rerun mark
 * into the run's history, superseding the step `from` and every step recorded after it; the next resume of the
 * run (its owner running the same target, `reenter: true` for a finished run) reuses every step before `from`
 * and runs `from` and the rest again. Nothing is deleted: the superseded records stay until the steps run again.
 */
import { workflowError } from "@phasekit/core";
import type { CheckpointStore } from "../engine/checkpoint-port.js";
import type { PlanStore } from "../store/plan-store.js";
import { resolveRunTarget, withPlanRootStore, type PlanRootsOptions } from "./target.js";

/** Which run, from which step, and why; with `store`, `target` is a slug of that store. */
export type RerunFromOptions = (PlanRootsOptions | { store: PlanStore }) & {
  target: string;
  /** The step key to run again (an id, or `id#n` for its nth occurrence), as `phasekit show` lists it. */
  from: string;
  reason?: string;
  /** The tool named as the lock's owner while the mark is written (default "phasekit rerun"). */
  tool?: string;
  now?: () => Date;
};

/** What rerunFrom did: the run's slug and the step keys it will run again, in history order. */
export interface RerunFromResult {
  slug: string;
  from: string;
  keys: string[];
}

/** Marks `from` and every later step of the run `target` to run again at its next resume (LOCKED while it runs). */
export async function rerunFrom(options: RerunFromOptions): Promise<RerunFromResult> {
  const now = options.now ?? (() => new Date());
  if ("store" in options) return markIn(options.store, options.target, options, now);
  const r = await resolveRunTarget(options);
  if (r.kind !== "found") throw r.kind === "new" ? notFound(options.target) : r.error;
  return withPlanRootStore(options, r.location.planRoot, (store) => markIn(store, r.location.slug, options, now));
}

async function markIn(store: PlanStore, slug: string, options: RerunFromOptions, now: () => Date): Promise<RerunFromResult> {
  const read = await store.readMetadata(slug);
  if (!read.ok) throw read.error;
  if (read.metadata === null) throw notFound(slug);
  const locked = await store.lock(slug, { owner: { tool: options.tool ?? "phasekit rerun" }, retries: 0 });
  if (!locked.ok) throw locked.error;
  try {
    // A lease of its own: the mark supersedes the records of every earlier lease (reuse-decision.ts).
    const held = locked.lock.store ?? store;
    const checkpoints = await held.checkpoints(slug, { now });
    if (checkpoints.supersede === undefined) {
      throw workflowError("rerun", "UNSUPPORTED", `the store at ${store.planRoot} cannot rerun run ${slug} from a step (its checkpoints have no supersede).`, {
        value: slug,
        hint: "fork the run instead (forkRun / phasekit fork), or use the file store",
      });
    }
    const note = options.reason === undefined ? {} : { reason: options.reason };
    const { keys } = await checkpoints.supersede(options.from, note);
    // For people: the mark is the fact; a journal line that cannot be written loses nothing.
    const meta = await held.readMetadata(slug);
    if (meta.ok && meta.metadata !== null) {
      await held.appendJournal(slug, { generation: meta.metadata.generation, at: now().toISOString(), event: "rerun", data: { from: options.from, steps: keys.length, ...note } }).catch(() => undefined);
    }
    return { slug, from: options.from, keys };
  } finally {
    await locked.lock.release();
  }
}

/**
 * Called by every path that ends a run (runWorkflow, `phasekit cancel`, the pi extension's pi/durable-held.ts):
 * the rerun marks of the steps it did not reach are spent (engine/rerun-spent.ts), before the status that ends
 * it is written, so a crash in between leaves a run that is not finished, whose next end spends them. Best
 * effort: a spend that cannot be written leaves the run pending for retention, as it was, and never hides how
 * the run ended.
 */
export async function spendRerunMarks(checkpoints: CheckpointStore): Promise<void> {
  await checkpoints.spendRerunMarks?.().catch(() => undefined);
}

function notFound(target: string): Error {
  return workflowError("rerun", "NOT_FOUND", `no run "${target}" to rerun.`, { value: target, hint: "list the runs with `phasekit list`" });
}
