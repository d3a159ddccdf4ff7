/** The run a pi session holds (durable-runs.ts): its lease, and its state written through that lease. */
import type { PlanStore, StoreLock } from "../store/plan-store.js";
import { spendRerunMarks } from "../run/rerun-from.js";
import { clearEndedRequests } from "../run/control-requests.js";
import { FINISHED_STATUSES } from "../store/run-status.js";
import { isLive, toPersisted, type WorkflowState } from "./core-bridge.js";
import type { DurableResult } from "./durable-contract.js";
import type { RecordedRun } from "./durable-budget.js";
import { failed } from "./durable-failure.js";

/** The tool named as the owner of a run a pi session holds. */
export const PI_TOOL = "pi";

/** A held run: writes go through `store`, the lease's (fencing belongs to the acquisition, not the store object). */
export interface Held {
  store: PlanStore;
  slug: string;
  lock: StoreLock;
  generation: number | null;
  createdAt: string;
  /** The state last written (its generation and notified flag): writing it again would change nothing. */
  wrote?: string;
  /** The budget entry last recorded in the run's history (read when the run was taken, then each one written). */
  budget: RecordedRun | null;
  /** Set once this hold spent the run's rerun marks at its end: the end notice's write has nothing more to spend. */
  spent?: true;
  /** Set once this hold cleared the requests its end made moot (as `spent`: once per hold). */
  cleared?: true;
}

/**
 * Writes `state` as the held run's metadata (compare-and-set on its generation); nothing when it is already there.
 * Every end of a pi run is written here (workflow_step, the commands, a replaced run, an exhausted budget): an
 * ended state first spends the rerun marks of the steps the run did not reach, as runWorkflow's end does; a
 * completed or cancelled one then clears the pause and stop requests left pending (`endRequests`).
 */
export async function writeHeld(h: Held, state: WorkflowState, now: number): Promise<DurableResult> {
  // A session change re-claims the run it already holds: skip the write when that very state is on disk.
  const key = `${state.generation}:${state.status}:${state.completionNotified}`;
  if (h.wrote === key) return { ok: true };
  const iso = new Date(now).toISOString();
  // Before the status that ends the run: a crash in between leaves it live, and its next end spends them.
  if (!isLive(state) && h.spent === undefined) await spendMarks(h, iso);
  const r = await h.store.writeMetadata(
    h.slug,
    { slug: h.slug, ownerTool: PI_TOOL, currentTool: PI_TOOL, status: state.status, createdAt: h.createdAt, updatedAt: iso, state: toPersisted(state) },
    h.generation,
  );
  if (!r.ok) return failed(h.store, h.slug, r.error, "could not write");
  h.generation = r.metadata.generation;
  h.wrote = key;
  if (FINISHED_STATUSES.has(state.status) && h.cleared === undefined) await endRequests(h);
  return { ok: true };
}

/**
 * runWorkflow's rule for the requests a run's end leaves (run/control-requests.ts), through its own helper:
 * after the write that made the run completed or cancelled, every pause or stop still pending was filed before
 * it and ends with the run. Once per hold, as runWorkflow clears once per run. A request that lands after the
 * clear (its filer read the status before the end: the store refuses a filing for a finished run) carries a
 * generation at or before the end's, and a re-entry of the run judges it superseded (`controlForRun`); pi never
 * re-enters an ended run. A run that ended failed keeps its requests, as runWorkflow's does: failed is not
 * finished, and a stop filed for it, before or after its end, ends its next resume cancelled.
 */
async function endRequests(h: Held): Promise<void> {
  // Tidiness, as in runWorkflow: a clear that fails is not an error of the end, which is written already.
  await clearEndedRequests(h.store, h.slug).catch(() => undefined);
  h.cleared = true;
}

/** `spendRerunMarks` over the held run's history; best effort like it (a history that cannot be opened spends nothing). */
async function spendMarks(h: Held, iso: string): Promise<void> {
  const checkpoints = await h.store.checkpoints(h.slug, { now: () => new Date(iso) }).catch(() => undefined);
  if (checkpoints === undefined) return;
  await spendRerunMarks(checkpoints);
  h.spent = true;
}
