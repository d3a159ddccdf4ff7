/**
 * The inspector's time travel: the timeline of a run, and fork / rerun from a step (the CLI's own
 * implementation, time-travel.ts), each answered as JSON for the page.
 */
import { workflowError } from "@phasekit/core";
import type { ApiContext } from "./inspector-api.js";
import { forksOf, type ForkLink } from "./fork-tree.js";
import { runTimeline, type RunTimeline } from "./run-timeline.js";
import { TIME_TRAVEL_SCHEMA } from "./time-travel-commands.js";
import { forkAt, rerunAt } from "./time-travel.js";

/** The time-travel actions the page offers on a step. */
export const TRAVEL_ACTIONS = ["fork", "rerun"] as const;
export type TravelAction = (typeof TRAVEL_ACTIONS)[number];

/** Forks the run at `body.at` (into `body.id`, else a fresh id) or marks it to rerun from `body.from`. */
export async function travel(o: ApiContext, id: string, action: TravelAction, body: Record<string, unknown>): Promise<object> {
  const text = (key: string): string | undefined => (typeof body[key] === "string" && (body[key] as string).trim() !== "" ? (body[key] as string).trim() : undefined);
  const step = text(action === "fork" ? "at" : "from");
  if (step === undefined) {
    throw workflowError("cli", "INVALID_OPTIONS", `a ${action} needs the step to ${action === "fork" ? "fork at" : "rerun from"}: {"${action === "fork" ? "at" : "from"}":"<step key>"}.`, { field: action === "fork" ? "at" : "from" });
  }
  const outcome = action === "fork" ? await forkAt(o.roots, id, step, text("id"), o.now()) : await rerunAt(o.roots, id, step, text("reason") ?? "rerun from the inspector", o.now());
  return { schema: TIME_TRAVEL_SCHEMA, ...outcome.body, text: outcome.text };
}

/** A page of the run's timeline (`step`: that step's items and failed attempts only), with the run's forks. */
export async function timelinePage(o: ApiContext, id: string, q: { step?: string; offset?: number; limit?: number }): Promise<RunTimeline & { forks: ForkLink[] | null }> {
  const timeline = await runTimeline(o.roots, id, o.now().getTime(), q);
  // Only for the whole timeline: a step's panel asks for its attempts, not the tree.
  return { ...timeline, forks: q.step === undefined ? await forksOf(o.roots, timeline.id) : null };
}
