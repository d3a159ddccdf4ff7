/**
 * A run's end, one sequence for every path that writes one (runWorkflow's ends, the pi extension's
 * pi/durable-held.ts, `phasekit cancel` of a run nobody runs), so they cannot drift: the rerun marks the run did
 * not carry out are spent before the status that ends it, and the requests that end made moot are cleared after it.
 */
import type { CheckpointStore } from "../engine/checkpoint-port.js";
import type { PlanStore } from "../store/plan-store.js";
import { clearEndedRequests } from "./control-requests.js";
import { spendRerunMarks } from "./rerun-from.js";

/** Statuses after which the run will never reach a step its marks name without a new start: their end spends them. */
const SPENDING = new Set(["completed", "cancelled", "failed"]);

/** The run that ends and how: `history` opens its checkpoints for the spend (undefined: nothing to spend, or spent already). */
export interface RunEnd {
  store: PlanStore;
  slug: string;
  status: string;
  history?: (() => Promise<CheckpointStore | undefined>) | undefined;
}

/**
 * Ends the run as `end.status` through `write` (true once that status is on record). Before it: the rerun marks
 * of the steps the run did not reach are spent (completed, cancelled, failed; a crash in between leaves the run
 * unended, and its next end spends them). After it, and only when the status is on record: the pending
 * requests the end made moot are cleared (control-requests.ts `signalsEndedBy`), best effort (tidiness: the
 * generation rule is what protects the next run). Resolves with what `write` said.
 */
export async function endRun(end: RunEnd, write: () => Promise<boolean>): Promise<boolean> {
  if (SPENDING.has(end.status) && end.history !== undefined) {
    const checkpoints = await end.history().catch(() => undefined);
    if (checkpoints !== undefined) await spendRerunMarks(checkpoints);
  }
  const ended = await write();
  if (ended) await clearEndedRequests(end.store, end.slug, end.status).catch(() => undefined);
  return ended;
}
