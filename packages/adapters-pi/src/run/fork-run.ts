/**
 * `forkRun`: time travel to a new run. The fork's history holds the source's completed steps recorded before the
 * step `at` (same keys, input fingerprints and outputs), so resuming the fork reuses every one of them and runs
 * `at` and what follows afresh; its workflow state is the one the source had there (the last copied dispatch's
 * outcome). The source is only read, never claimed. The fork is built in a hidden folder of the plan root and
 * renamed into place when complete: a process killed mid-fork leaves no run that could resume half-copied.
 */
import path from "node:path";
import { randomBytes } from "node:crypto";
import { mkdir, rename, rm } from "node:fs/promises";
import { workflowError, type WorkflowError } from "@phasekit/core";
import { syncDir } from "../io/atomic-write.js";
import { nodeFs } from "../io/fs-port.js";
import type { JsonValue } from "../io/plain-json.js";
import { validateSlug } from "../io/plan-paths.js";
import { writeMetadataWithLog, readRunMetadata } from "../store/log-metadata.js";
import type { WorkflowMetadata, WorkflowMetadataInput } from "../store/metadata-schema.js";
import { METADATA_FILE } from "../store/plan-store-port.js";
import { JOURNAL_EVENT, journalEventData } from "../store/journal-view.js";
import { openRunLog } from "../store/run-log/run-log.js";
import { readRunLog, type RunLogView } from "../store/run-log/reader.js";
import type { StepEntry } from "../store/run-log/run-index.js";
import { dispatchKey, WORKFLOW_BASE_KEY } from "./dispatch-record.js";
import { generateRunId } from "./id.js";
import { resolveRunTarget, type PlanRootsOptions } from "./target.js";

// Keys of recorded dispatches: `phasekit:dispatch#<n>`.
const DISPATCH_PREFIX = dispatchKey(1).slice(0, -1);

/** The event name, in a fork's history, that says where it came from. */
export const FORKED_EVENT = "forked";
/** Hidden folders of the plan root that hold a fork being built (never a run: slugs cannot start with a dot). */
export const FORK_TEMP_PREFIX = ".fork-";

/** Which run to fork, before which step, and the new run's id (default: a fresh one). */
export type ForkRunOptions = PlanRootsOptions & {
  target: string;
  /** The first step key the fork runs itself (an id, or `id#n`), as `phasekit show` lists it. */
  at: string;
  id?: string;
  /** The tool named as the fork's current tool (default "phasekit fork"). */
  tool?: string;
  now?: () => Date;
  /** Test hook: called after each step copied into the fork (before the rename). */
  onCopied?: (key: string) => void | Promise<void>;
};

/** What forkRun made: the new run, where it came from, and the step keys it reuses. */
export interface ForkRunResult {
  slug: string;
  runDir: string;
  from: { slug: string; at: string };
  copied: string[];
}

/** Makes a new run holding run `target`'s history up to (not including) step `at`; the source is untouched. */
export async function forkRun(options: ForkRunOptions): Promise<ForkRunResult> {
  const now = options.now ?? (() => new Date());
  const r = await resolveRunTarget(options);
  if (r.kind !== "found") throw r.kind === "new" ? fail("NOT_FOUND", `no run "${options.target}" to fork.`, { value: options.target, hint: "list the runs with `phasekit list`" }) : r.error;
  const { planRoot, slug: source, runDir: sourceDir } = r.location;
  const view = await readRunLog(sourceDir);
  if (view === null) throw fail("NOT_FOUND", `run ${source} has no history to fork.`, { value: source, hint: "a run is forked once it recorded steps" });
  try {
    const meta = await readRunMetadata(path.join(sourceDir, METADATA_FILE), nodeFs);
    if (!meta.ok) throw meta.error;
    if (meta.metadata === null) throw fail("NOT_FOUND", `run ${source} has no metadata to fork.`, { value: source });
    const entries = view.entries();
    const at = entries.findIndex((e) => e.key === options.at);
    if (at < 0) {
      const keys = entries.slice(0, 8).map((e) => e.key).join(", ");
      throw fail("NOT_FOUND", `run ${source} holds no step "${options.at}".`, { field: "at", value: options.at, hint: `pick a step key from \`phasekit show ${source}\` (e.g. ${keys})` });
    }
    const copied = entries.slice(0, at).filter((e) => e.status === "completed" && e.superseded !== true);
    const slug = await newSlug(planRoot, options.id);
    const temp = path.join(planRoot, `${FORK_TEMP_PREFIX}${slug}-${randomBytes(4).toString("hex")}`);
    await mkdir(temp, { mode: 0o700 });
    try {
      await copyHistory(view, copied, temp, slug, { source, at: options.at }, meta.metadata, options, now);
      // Complete and durable: only now does the fork become a run (a rename, then the plan root's entry synced).
      if (await exists(path.join(planRoot, slug))) throw taken(slug);
      await rename(temp, path.join(planRoot, slug));
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
    let state: JsonValue | undefined;
    for (const e of copied) {
      const text = await view.outputText(e);
      if (text === undefined) {
        throw fail("CORRUPT_FILE", `the stored output of step ${e.key} of run ${from.source} is missing or damaged: the fork would not reuse it.`, { value: e.key, hint: `fork at ${e.key} instead, or run ${from.source} again to store it` });
      }
      const output = JSON.parse(text) as JsonValue;
      await log.step(e.key, null, () => output, { inputFingerprint: e.inputFingerprint });
      // The workflow state where the fork starts: the body's starting state, moved by each copied dispatch.
      if (e.key === WORKFLOW_BASE_KEY) state = output;
      else if (e.key.startsWith(DISPATCH_PREFIX) && isOkOutcome(output)) state = output.state;
      await options.onCopied?.(e.key);
    }
    // What described the source's later course (its phase, steps, failure) is not the fork's.
    const { schemaVersion: _v, generation: _g, failureReason: _f, currentStepId: _c, lastCompletedStepId: _l, phase: _p, state: _s, ...kept } = source;
    const at = now().toISOString();
    const status = state !== undefined && (state as { status?: unknown }).status === "paused" ? "paused" : "running";
    const next: WorkflowMetadataInput = { ...kept, slug, status, currentTool: options.tool ?? "phasekit fork", createdAt: at, updatedAt: at, ...(state === undefined ? {} : { state }) };
    const written = await writeMetadataWithLog(log, path.join(dir, METADATA_FILE), nodeFs, next, null);
    if (!written.ok) throw written.error;
    const data = { from: from.source, at: from.at, steps: copied.length };
    await log.event(FORKED_EVENT, data);
    await log.event(JOURNAL_EVENT, journalEventData({ generation: written.metadata.generation, at, event: FORKED_EVENT, data }));
  } finally {
    await log.close();
  }
}

function isOkOutcome(v: JsonValue): v is { ok: true; state: JsonValue } {
  return typeof v === "object" && v !== null && !Array.isArray(v) && v["ok"] === true && v["state"] !== undefined;
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

function taken(slug: string): WorkflowError {
  return fail("INVALID_OPTIONS", `a run "${slug}" already exists: a fork never writes into another run.`, { field: "id", value: slug, hint: "pick another id, or leave it out for a fresh one" });
}

function fail(code: "NOT_FOUND" | "CORRUPT_FILE" | "INVALID_OPTIONS", message: string, details: Record<string, unknown>): WorkflowError {
  return workflowError("fork", code, message, details);
}
