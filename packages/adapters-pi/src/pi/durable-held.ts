/** The run a pi session holds (durable-runs.ts): its lease, and its state written through that lease. */
import type { CheckpointStore } from "../engine/checkpoint-port.js";
import type { PlanStore, StoreLock } from "../store/plan-store.js";
import { controlAfter } from "../run/control-requests.js";
import { endRun } from "../run/run-end.js";
import { isLive, toPersisted, type WorkflowState } from "./core-bridge.js";
import type { DurableResult } from "./durable-contract.js";
import type { RecordedRun } from "./durable-budget.js";
import { failed } from "./durable-failure.js";

/** The tool named as the owner of a run a pi session holds. */
export const PI_TOOL = "pi";

/** A held run: writes go through `store`, the lease's (fencing belongs to the acquisition, not the store object). */
export interface Held {
  store: PlanStore;
  /**
   * `store` as this hold sees the run's requests (run/control-requests.ts `controlForRun`, runWorkflow's rule):
   * a request the run's last end made moot, filed up to that end, is never honoured. Set when the run is taken,
   * and again at each end this hold writes (a run paused here and resumed here keeps its hold).
   */
  control: PlanStore;
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
}

/**
 * Writes `state` as the held run's metadata (compare-and-set on its generation); nothing when it is already there.
 * Every end of a pi run is written here (workflow_step, the commands, a replaced run, an exhausted budget), through
 * runWorkflow's own end sequence (run/run-end.ts `endRun`): an ended state first spends the rerun marks of the
 * steps the run did not reach (once per hold), and the requests the end made moot are cleared after the write (a
 * pause at every end; a stop when the run is completed or cancelled, while one filed for a failed or paused run
 * stays for its next resume). A write of a running state is no end: it goes through endRun too, which then does nothing around it.
 */
export async function writeHeld(h: Held, state: WorkflowState, now: number): Promise<DurableResult> {
  // A session change re-claims the run it already holds: skip the write when that very state is on disk.
  const key = `${state.generation}:${state.status}:${state.completionNotified}`;
  if (h.wrote === key) return { ok: true };
  const iso = new Date(now).toISOString();
  let result: DurableResult = { ok: true };
  // A live state spends nothing (endRun spends for completed, cancelled, failed); once spent, a hold spends no more.
  const history = isLive(state) || h.spent !== undefined ? undefined : () => heldHistory(h, iso);
  await endRun({ store: h.store, slug: h.slug, status: state.status, history }, async () => {
    const r = await h.store.writeMetadata(
      h.slug,
      { slug: h.slug, ownerTool: PI_TOOL, currentTool: PI_TOOL, status: state.status, createdAt: h.createdAt, updatedAt: iso, state: toPersisted(state) },
      h.generation,
    );
    if (!r.ok) {
      result = await failed(h.store, h.slug, r.error, "could not write");
      return false;
    }
    h.generation = r.metadata.generation;
    h.wrote = key;
    // endRun clears what this end made moot right after; a late filer's request is superseded when met.
    if (state.status !== "running") h.control = controlAfter(h.store, { status: state.status, generation: r.metadata.generation });
    return true;
  });
  return result;
}

/** The held run's history, for endRun's spend (a history that cannot be opened spends nothing); the hold has spent once it is open. */
async function heldHistory(h: Held, iso: string): Promise<CheckpointStore | undefined> {
  const checkpoints = await h.store.checkpoints(h.slug, { now: () => new Date(iso) }).catch(() => undefined);
  if (checkpoints !== undefined) h.spent = true;
  return checkpoints;
}
