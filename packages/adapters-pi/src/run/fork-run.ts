/**
 * `forkRun`: time travel to a new run. The fork's history holds the source's completed steps recorded before the
 * step `at` (same keys, input fingerprints and outputs), so resuming the fork reuses every one of them and runs
 * `at` and what follows afresh; its workflow state is the one the source had there (the last copied dispatch's
 * outcome). The source is only read, never claimed. The fork is built in a hidden folder of the plan root and
 * renamed into place when complete: a process killed mid-fork leaves no run that could resume half-copied.
 */
import path from "node:path";
import { mkdir, rename, rm, rmdir } from "node:fs/promises";
import { syncDir } from "../io/atomic-write.js";
import { fsErrorCode, nodeFs } from "../io/fs-port.js";
import type { JsonValue } from "../io/plain-json.js";
import { validateSlug } from "../io/plan-paths.js";
import { writeMetadataWithLog, readRunMetadata } from "../store/log-metadata.js";
import type { WorkflowMetadata } from "../store/metadata-schema.js";
import { METADATA_FILE } from "../store/plan-store-port.js";
import { forkTempDir, removeDeadForks } from "../store/fork-leftovers.js";
import { JOURNAL_EVENT, journalEventData } from "../store/journal-view.js";
import { openRunLog } from "../store/run-log/run-log.js";
import { readRunLog, type RunLogView } from "../store/run-log/reader.js";
import type { StepEntry } from "../store/run-log/run-index.js";
import { forkError as fail, forkMetadata, ForkState, stepsBefore, taken, unreadableOutput } from "./fork-parts.js";
import { forkInStore } from "./fork-store.js";
import { generateRunId } from "./id.js";
import { resolveRunTarget } from "./target.js";

import { FORKED_EVENT, type ForkRunOptions, type ForkRunResult } from "./fork-parts.js";
export { FORKED_EVENT, type ForkRunOptions, type ForkRunResult };

/** Makes a new run holding run `target`'s history up to (not including) step `at`; the source is untouched. */
export async function forkRun(options: ForkRunOptions): Promise<ForkRunResult> {
  const now = options.now ?? (() => new Date());
  if ("store" in options) return forkInStore(options.store, options, now);
  const r = await resolveRunTarget(options);
  if (r.kind !== "found") throw r.kind === "new" ? fail("NOT_FOUND", `no run "${options.target}" to fork.`, { value: options.target, hint: "list the runs with `phasekit list`" }) : r.error;
  const { planRoot, slug: source, runDir: sourceDir } = r.location;
  const view = await readRunLog(sourceDir);
  if (view === null) throw fail("NOT_FOUND", `run ${source} has no history to fork.`, { value: source, hint: "a run is forked once it recorded steps" });
  try {
    const meta = await readRunMetadata(path.join(sourceDir, METADATA_FILE), nodeFs);
    if (!meta.ok) throw meta.error;
    if (meta.metadata === null) throw fail("NOT_FOUND", `run ${source} has no metadata to fork.`, { value: source });
    const copied = stepsBefore(view.entries(), options.at, source);
    await removeDeadForks(planRoot);
    const slug = await newSlug(planRoot, options.id);
    // The pid in the name lets a later fork, and gc, tell a dead fork's folder from a live one's (fork-leftovers.ts).
    const temp = forkTempDir(planRoot, slug);
    await mkdir(temp, { mode: 0o700 });
    try {
      await copyHistory(view, copied, temp, slug, { source, at: options.at }, meta.metadata, options, now);
      // Complete and durable: only now does the fork become a run (a rename, then the plan root's entry synced).
      await moveIntoPlace(temp, path.join(planRoot, slug), slug);
      await syncDir(nodeFs, planRoot);
    } catch (error) {
      await rm(temp, { recursive: true, force: true }).catch(() => undefined);
      throw error;
    }
    return { slug, runDir: path.join(planRoot, slug), from: { slug: source, at: options.at }, copied: copied.map((e) => e.key) };
  } finally {
    view.close();
  }
}

async function copyHistory(
  view: RunLogView,
  copied: readonly StepEntry[],
  dir: string,
  slug: string,
  from: { source: string; at: string },
  source: WorkflowMetadata,
  options: ForkRunOptions,
  now: () => Date,
): Promise<void> {
  const log = await openRunLog({ runDir: dir, now: () => now().getTime() });
  try {
    const state = new ForkState();
    for (const e of copied) {
      const text = await view.outputText(e);
      if (text === undefined) throw unreadableOutput(e.key, from.source);
      const output = JSON.parse(text) as JsonValue;
      await log.step(e.key, null, () => output, { inputFingerprint: e.inputFingerprint });
      state.note(e.key, output);
      await options.onCopied?.(e.key);
    }
    const at = now().toISOString();
    const next = forkMetadata(source, slug, state.value, options.tool ?? "phasekit fork", at);
    const written = await writeMetadataWithLog(log, path.join(dir, METADATA_FILE), nodeFs, next, null);
    if (!written.ok) throw written.error;
    const data = { from: from.source, at: from.at, steps: copied.length };
    await log.event(FORKED_EVENT, data);
    await log.event(JOURNAL_EVENT, journalEventData({ generation: written.metadata.generation, at, event: FORKED_EVENT, data }));
  } finally {
    await log.close();
  }
}

/**
 * Renames the built fork to `target`, never replacing a folder someone else made: an exclusive mkdir claims the
 * name (a rename onto a folder would silently replace an empty one), and the rename replaces only that empty claim;
 * one filled in between makes the rename fail. Either way the id is taken: the typed error, their folder untouched.
 */
async function moveIntoPlace(temp: string, target: string, slug: string): Promise<void> {
  try {
    await mkdir(target, { mode: 0o700 });
  } catch (error) {
    if (fsErrorCode(error) === "EEXIST") throw taken(slug);
    throw error;
  }
  try {
    await rename(temp, target);
  } catch (error) {
    const code = fsErrorCode(error);
    if (code === "ENOTEMPTY" || code === "EEXIST") throw taken(slug);
    await rmdir(target).catch(() => undefined);
    throw error;
  }
}

async function newSlug(planRoot: string, id: string | undefined): Promise<string> {
  if (id === undefined) return generateRunId((candidate) => exists(path.join(planRoot, candidate)));
  const v = validateSlug(id);
  if (!v.ok) throw v.error;
  if (await exists(path.join(planRoot, v.slug))) throw taken(v.slug);
  return v.slug;
}

async function exists(p: string): Promise<boolean> {
  return nodeFs.lstat(p).then(
    () => true,
    () => false,
  );
}

