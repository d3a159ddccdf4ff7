/**
 * Asking a run to change course: pause, stop, resume, cancel. The one implementation behind both the CLI
 * commands and the inspector's buttons; requests go through the run's control-request API
 * (run/control-requests.ts), a cancel of a run nobody runs under the run's lock.
 */
import { cancelNow, compileDefinitions, migrateState, refusalToError } from "@phasekit/core";
import { persisted } from "../run/persisted.js";
import { requestPause, requestStop, type ControlTargetOptions } from "../run/control-requests.js";
import { endRun } from "../run/run-end.js";
import { storeAt } from "./store-runs.js";
import type { WorkflowMetadataInput } from "../store/metadata-schema.js";
import { fail } from "./io.js";
import { isFinal, locateRun, runDetail, withRunStore, type Roots } from "./run-view.js";
import type { ShownStatus } from "./run-types.js";

/** The tool name the CLI writes under when it changes a run itself (cancel of a run nobody runs, state set). */
export const CLI_TOOL = "phasekit-cli";

/** The actions, in the order the inspector offers them. */
export const CONTROL_ACTIONS = ["pause", "stop", "resume", "cancel"] as const;
export type ControlAction = (typeof CONTROL_ACTIONS)[number];

/** What an action did: the phasekit.control/1 body (`id` is always the run's slug) and a sentence for people. */
export interface ControlOutcome {
  body: { id: string; action: string } & Record<string, unknown>;
  text: string;
}

/**
 * The actions worth offering for a run shown with `status` and `pending` request: those `controlRun` carries out
 * instead of refusing (it checks again when asked). The inspector's buttons come from here, so the two never
 * disagree on, say, whether a failed run can be cancelled.
 */
export function offeredActions(status: ShownStatus, pending: { signal: string } | null | undefined): ControlAction[] {
  const offered: ControlAction[] = [];
  if (status === "running" && pending?.signal !== "pause") offered.push("pause");
  if (status === "running" && pending?.signal !== "stop") offered.push("stop");
  if (pending?.signal === "pause") offered.push("resume");
  // Any run not over: a live one is asked to stop, one nobody runs is cancelled under its lock. A run with no
  // workflow.json yet, or one that cannot be read, has nothing to cancel.
  if (!isFinal(status) && status !== "new" && status !== "unreadable") offered.push("cancel");
  return offered;
}

/** Applies `action` to the run `target`; throws a typed error (NOT_FOUND, NOT_PAUSED, NOT_RUNNING, LOCKED …) when it cannot. */
export async function controlRun(roots: Roots, target: string, action: ControlAction, reason: string | undefined, now: Date): Promise<ControlOutcome> {
  if (action === "pause" || action === "stop") {
    const location = await locateRun(roots, target);
    const id = location.slug;
    const request = await (action === "pause" ? requestPause : requestStop)({ ...(await controlTarget(roots, id, target)), ...(reason === undefined ? {} : { reason }) });
    return { body: { id, action, request }, text: `${action} requested for run ${id}: ${request.reason} (honoured at the run's next step)` };
  }
  const d = await runDetail(roots, target, now.getTime());
  const id = d.summary.id;
  if (action === "resume") {
    if (d.pending?.signal === "pause") {
      const pending = d.pending;
      // A withdrawal is the filer's act, whoever holds the run (a holder's clear would be refused on PostgreSQL).
      const w = await withRunStore(roots, await locateRun(roots, target), (store) => store.withdrawControl(id, pending));
      if (!w.ok) throw w.error;
      if (!w.withdrawn) fail("cli", "NOT_PAUSED", `run ${id}: its pause request is no longer pending (the run took it at a step boundary, or a newer one replaced it); nothing was withdrawn.`, { value: id });
      // A crashed run goes on only when its owner runs it again: said so, never "goes on" on its own.
      const on = d.summary.status === "running" ? "goes on" : `is ${d.summary.status}; it continues, unpaused, when ${d.summary.ownerTool ?? "its owner"} runs target ${id} again`;
      return { body: { id, action, withdrawn: d.pending }, text: `pause request withdrawn: run ${id} ${on}` };
    }
    if (isFinal(d.summary.status)) fail("cli", "NOT_PAUSED", `run ${id} is ${d.summary.status}: there is nothing to resume.`, { value: id });
    if (d.summary.status === "running") fail("cli", "NOT_PAUSED", `run ${id} is running and has no pending pause.`, { value: id });
    // The CLI cannot run the workflow's code: the owner does, by running the same target again.
    return { body: { id, action, ownerTool: d.summary.ownerTool }, text: `run ${id} is ${d.summary.status}; it continues when ${d.summary.ownerTool ?? "its owner"} runs target ${id} again` };
  }
  const why = reason ?? "cancelled from the command line";
  if (isFinal(d.summary.status)) fail("cli", "NOT_RUNNING", `run ${id} is already ${d.summary.status}.`, { value: id });
  if (d.summary.status === "running") {
    const request = await requestStop({ ...(await controlTarget(roots, id, d.summary.runDir)), reason: why });
    return { body: { id, action: "stop", request }, text: `run ${id} is live: stop requested (${why}); it ends cancelled at its next step` };
  }
  await cancelStored(roots, target, why, now);
  return { body: { id, action: "cancel", reason: why }, text: `run ${id} cancelled: ${why}` };
}

/** Cancels a run nobody is running: under its lock, compare-and-set on its generation, core state cancelled too. */
async function cancelStored(roots: Roots, target: string, reason: string, now: Date): Promise<void> {
  const location = await locateRun(roots, target);
  await withRunStore(roots, location, async (store) => {
    const locked = await store.lock(location.slug, { owner: { tool: CLI_TOOL }, retries: 0 });
    if (!locked.ok) throw locked.error;
    try {
      const read = await store.readMetadata(location.slug);
      if (!read.ok) throw read.error;
      if (read.metadata === null) fail("cli", "NOT_FOUND", `run ${location.slug} has no workflow.json.`, { value: location.slug });
      const { schemaVersion: _v, generation, ...m } = read.metadata;
      const next: WorkflowMetadataInput = { ...m, status: "cancelled", failureReason: reason, currentTool: CLI_TOOL, updatedAt: now.toISOString() };
      if (m.state !== undefined) {
        const state = migrateState(m.state);
        if (!state.ok) throw refusalToError(state.error);
        // Cancelling reads no definition; the CLI has none loaded here, so an empty compiled registry serves.
        const none = compileDefinitions({});
        const cancelled = none.ok ? cancelNow(none.registry, state.state, { now: now.getTime() }) : none;
        if (cancelled.ok) next.state = persisted(cancelled.state);
      }
      const held = locked.lock.store ?? store;
      // runWorkflow's end (run/run-end.ts): marks spent before, the requests it made moot cleared after.
      await endRun({ store: held, slug: location.slug, status: "cancelled", history: () => held.checkpoints(location.slug, { now: () => now }) }, async () => {
        const w = await held.writeMetadata(location.slug, next, generation);
        if (!w.ok) throw w.error;
        return true;
      });
    } finally {
      await locked.lock.release();
    }
  });
}

/** Whom a request goes to: the plan folder's target as given, or the run's slug in the store named by URL. */
export async function controlTarget(roots: Roots, slug: string, target: string): Promise<ControlTargetOptions> {
  if (roots.store === undefined) return { ...roots, target };
  return { store: await storeAt(roots.store, roots.repoRoot), target: slug };
}
