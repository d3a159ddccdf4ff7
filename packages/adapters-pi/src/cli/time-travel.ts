/**
 * Time travel from a shell and from the inspector, one implementation: `fork` (forkRun: a new run holding a run's
 * history up to a step) and `rerun` (rerunFrom: the same run runs a step and every later one again at its next
 * resume). Both go through the library calls; the CLI adds only the run's location and the words for people.
 */
import { forkRun } from "../run/fork-run.js";
import { rerunFrom } from "../run/rerun-from.js";
import { CLI_TOOL } from "./control-actions.js";
import { storeAt } from "./store-runs.js";
import { runJournal, type Roots } from "./run-view.js";
import type { StepRecord } from "../engine/records.js";
import type { RunLocation } from "../run/target.js";
import { FORKED_EVENT } from "../run/fork-parts.js";
import { bodyStepKeys } from "../engine/reserved-keys.js";

/** What a time-travel action did: its JSON body (`id` the run acted on or made) and a sentence. */
export interface TimeTravelOutcome {
  body: { id: string; action: "fork" | "rerun" } & Record<string, unknown>;
  text: string;
}

/** Forks run `target` at step `at` into a new run (`id`, default a fresh one). */
export async function forkAt(roots: Roots, target: string, at: string, id: string | undefined, now: Date): Promise<TimeTravelOutcome> {
  const where = roots.store === undefined ? { ...roots, target } : { store: await storeAt(roots.store, roots.repoRoot), target };
  const r = await forkRun({ ...where, at, tool: CLI_TOOL, now: () => now, ...(id === undefined ? {} : { id }) });
  // The sentence counts the body's steps; the JSON lists every key copied (phasekit's own entries too).
  return {
    body: { id: r.slug, action: "fork", from: r.from, reused: r.copied },
    text: `forked run ${r.from.slug} at ${at} into ${r.slug}: ${bodyStepKeys(r.copied).length} step(s) before it are reused when ${r.slug} is run; ${at} and what follows run afresh`,
  };
}

/** Marks step `from` and every later step of run `target` to run again at its next resume. */
export async function rerunAt(roots: Roots, target: string, from: string, reason: string | undefined, now: Date): Promise<TimeTravelOutcome> {
  const where = roots.store === undefined ? { ...roots, target } : { store: await storeAt(roots.store, roots.repoRoot), target };
  const r = await rerunFrom({ ...where, from, tool: CLI_TOOL, now: () => now, ...(reason === undefined ? {} : { reason }) });
  const steps = bodyStepKeys(r.keys);
  return {
    body: { id: r.slug, action: "rerun", from: r.from, steps: r.keys },
    text: `run ${r.slug}: ${steps.length} step(s) from ${from} on (${steps.join(", ")}) run again at its next resume; the earlier ones are reused (a finished run is resumed with reenter)`,
  };
}

/**
 * Where a forked run's step came from (for `why`): the source run and fork point when the step's record was
 * written by the fork itself (the copies are stamped no later than the fork's `forked` journal entry; everything
 * the fork runs afterwards is later), else null.
 */
export async function forkOrigin(roots: Roots, location: RunLocation, record: StepRecord | null): Promise<{ run: string; at: string } | null> {
  if (record?.status !== "completed" || record.finishedAt === undefined) return null;
  const journal = await runJournal(location, roots).catch(() => []);
  const forked = journal.find((e) => e.event === FORKED_EVENT);
  const d = (forked?.data ?? {}) as { from?: unknown; at?: unknown };
  if (forked === undefined || typeof d.from !== "string" || typeof d.at !== "string") return null;
  return Date.parse(record.finishedAt) <= Date.parse(forked.at) ? { run: d.from, at: d.at } : null;
}
