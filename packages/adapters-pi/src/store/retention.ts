/**
 * Retention of finished runs: `gc` removes run folders whose history says completed, cancelled or failed, beyond
 * the newest `keep` or older than `olderThan`. It decides from the run's history (log-metadata.ts
 * `readRunMetadata`), never from workflow.json alone: that file is a view, and a displaced holder's late rename
 * can set it back to `completed` over a run that crashed while running. It never removes a running or paused
 * run, a folder whose lock is live, a finished run that waits for a rerun (`awaitsRerun`), a folder without
 * metadata or whose metadata or history cannot be read, or anything that is not a run folder; each removal happens under the run's lock after a re-read, so a run
 * resumed meanwhile is spared. It also removes the hidden folder a fork killed mid-way left (never a run) once
 * its process is gone, by the fork's own rule (fork-leftovers.ts); never one whose process is alive.
 */
import path from "node:path";
import { randomBytes } from "node:crypto";
import { isFinished, isWorkflowError, workflowError } from "@phasekit/core";
import { fsErrorCode, nodeFs, type FsPort } from "../io/fs-port.js";
import { DEFAULT_LOCK_STALE_MS } from "../lock/holder.js";
import { judgeLiveness } from "../lock/liveness.js";
import { acquirePlanLock } from "../lock/plan-lock.js";
import { validateSlug } from "../io/plan-paths.js";
import { deadForkFolders, removeDeadForks } from "./fork-leftovers.js";
import { readRunMetadata } from "./log-metadata.js";
import { readRunLog } from "./run-log/reader.js";
import type { ReadMetadataResult } from "./metadata.js";
import type { WorkflowMetadata } from "./metadata-schema.js";
import { awaitsRerun, checkRetentionLimits, retentionVerdicts, type GcEntry, type GcKeptReason, type GcReport } from "../engine/retention-policy.js";

const SCOPE = "gc";

/** Options of `gc`; at least one of `keep` and `olderThan` is required. */
export interface GcOptions {
  planRoot: string;
  /** Keep this many finished runs (newest by `updatedAt`); older ones are removed. */
  keep?: number | undefined;
  /** Remove finished runs whose `updatedAt` is more than this many ms before `now()`. */
  olderThan?: number | undefined;
  now: () => Date;
  /** Report what would be removed without removing it. */
  dryRun?: boolean | undefined;
  /** Consider only this run folder (`phasekit rm`): the same rules, for one run. */
  only?: string | undefined;
  /** Lock stale time used to judge a lock live (default 10 s, as the lock's own default). */
  staleMs?: number | undefined;
  fs?: FsPort | undefined;
}

/** Removes the finished runs of the plan root past the limits, by the rule every store applies (engine/retention-policy.ts). */
export async function gc(options: GcOptions): Promise<GcReport> {
  const o = checkOptions(options);
  const fs = options.fs ?? nodeFs;
  const report: GcReport = { removed: [], kept: [] };
  // Not for one run (`rm`): a fork's leftover belongs to no run.
  if (options.only === undefined) {
    const leftovers = o.dryRun ? await deadForkFolders(o.planRoot) : await removeDeadForks(o.planRoot);
    for (const name of leftovers) report.removed.push({ slug: name, runDir: path.join(o.planRoot, name), reason: "dead-fork" });
  }
  const finished: Array<{ slug: string; runDir: string; metadata: WorkflowMetadata }> = [];
  for (const slug of await listFolders(fs, o.planRoot)) {
    if (options.only !== undefined && slug !== options.only) continue;
    const runDir = path.join(o.planRoot, slug);
    const kept = (reason: GcKeptReason, extra: Partial<GcEntry<GcKeptReason>> = {}) => report.kept.push({ slug, runDir, reason, ...extra });
    if (!validateSlug(slug).ok) {
      kept("not-a-run");
      continue;
    }
    const read = await readRunMetadata(path.join(runDir, "workflow.json"), fs).catch(unreadable);
    if (!read.ok) kept("corrupt-metadata", { error: read.error.message });
    else if (read.metadata === null) kept("no-metadata");
    else if (!isFinished(read.metadata)) kept("active", describe(read.metadata));
    else finished.push({ slug, runDir, metadata: read.metadata });
  }
  const nowMs = o.now().getTime();
  const aged = finished.map((f) => ({ ...f, updatedAt: f.metadata.updatedAt, ageMs: nowMs - Date.parse(f.metadata.updatedAt) }));
  for (const { run, reason } of retentionVerdicts(aged, o)) {
    const entry = { slug: run.slug, runDir: run.runDir, ...describe(run.metadata) };
    if (reason === undefined) {
      report.kept.push({ ...entry, reason: "within-limits" });
      continue;
    }
    // The one liveness rule (lock identity, then the heartbeat), never wall-clock staleness alone: a dead holder
    // whose lock time lies in the future is not "locked", and a live one whose clock is behind is. A verdict one
    // look cannot settle ("unverified") is left to the lock's own takeover below, which watches the heartbeat.
    const live = await judgeLiveness(run.runDir, { staleMs: o.staleMs });
    if (live.verdict === "live" && live.by !== "unverified") {
      report.kept.push({ ...entry, reason: "locked" });
      continue;
    }
    const waits = await waitsForRerun(run.runDir).catch(unreadableHistory);
    if (waits !== false) {
      report.kept.push({ ...entry, ...(waits === true ? { reason: "rerun-pending" } : { reason: "corrupt-metadata", error: waits.error }) });
      continue;
    }
    if (o.dryRun) {
      report.removed.push({ ...entry, reason });
      continue;
    }
    const outcome = await removeUnderLock(fs, o, run.runDir, run.metadata.generation);
    if (outcome === "removed") report.removed.push({ ...entry, reason });
    else report.kept.push({ ...entry, ...outcome });
  }
  return report;
}

type RemoveOutcome = "removed" | { reason: GcKeptReason; error?: string };

// Under the lock, re-read: a run resumed (or rewritten) since the scan has a new generation and is spared.
// The folder is renamed aside first so that it disappears from the plan root in one step.
async function removeUnderLock(fs: FsPort, o: Settings, runDir: string, generation: number): Promise<RemoveOutcome> {
  const acquired = await acquirePlanLock({ runDir, owner: { tool: "phasekit-gc" }, staleMs: o.staleMs });
  if (!acquired.ok) return acquired.error.code === "LOCKED" ? { reason: "locked" } : { reason: "remove-failed", error: acquired.error.message };
  const lock = acquired.lock;
  try {
    const again = await readRunMetadata(path.join(runDir, "workflow.json"), fs).catch(unreadable);
    if (!again.ok || again.metadata === null || again.metadata.generation !== generation || !isFinished(again.metadata)) {
      return { reason: "changed-meanwhile" };
    }
    // A rerun is marked under this same lock, so one made since the scan is seen here.
    const waits = await waitsForRerun(runDir).catch(unreadableHistory);
    if (waits !== false) return waits === true ? { reason: "rerun-pending" } : { reason: "corrupt-metadata", error: waits.error };
    const aside = path.join(path.dirname(runDir), `.gc-${path.basename(runDir)}-${randomBytes(6).toString("hex")}`);
    await fs.rename(runDir, aside);
    await fs.rm(aside, { recursive: true, force: true });
    return "removed";
  } catch (error) {
    return { reason: "remove-failed", error: error instanceof Error ? error.message : String(error) };
  } finally {
    // After the move the lock went with the folder, so this release reports LOCK_NOT_OWNED: expected, ignored.
    await lock.release();
  }
}

/** `awaitsRerun` over the run log of `runDir` (a run without one has no rerun mark). */
async function waitsForRerun(runDir: string): Promise<boolean> {
  const view = await readRunLog(runDir);
  try {
    return view !== null && awaitsRerun(view.entries());
  } finally {
    view?.close();
  }
}

// A history that cannot be read keeps the run (as unreadable metadata does), saying why.
function unreadableHistory(error: unknown): { error: string } {
  if (isWorkflowError(error)) return { error: error.message };
  throw error;
}

async function listFolders(fs: FsPort, planRoot: string): Promise<string[]> {
  try {
    const entries = await fs.readdirEntries(planRoot);
    // Symlinks are skipped: gc removes only real folders below the plan root. Dot-names are ours (temp, aside).
    return entries.filter((e) => e.isDirectory() && !e.name.startsWith(".")).map((e) => e.name).sort();
  } catch (error) {
    if (fsErrorCode(error) === "ENOENT") return [];
    throw workflowError(SCOPE, "READ_FAILED", `cannot list the plan root ${planRoot}: ${String(error)}`, { file: planRoot, hint: "check the folder's permissions" }, error);
  }
}

// A history that cannot be read (CORRUPT_FILE, UNSAFE_FILE…) keeps the run, as a damaged workflow.json does.
function unreadable(error: unknown): ReadMetadataResult {
  if (isWorkflowError(error)) return { ok: false, error };
  throw error;
}

function describe(m: WorkflowMetadata): { status: string; updatedAt: string } {
  return { status: m.status, updatedAt: m.updatedAt };
}

interface Settings {
  planRoot: string;
  keep: number | undefined;
  olderThan: number | undefined;
  now: () => Date;
  dryRun: boolean;
  staleMs: number;
}

function checkOptions(o: GcOptions): Settings {
  const bad = (field: string, value: unknown, hint: string) =>
    workflowError(SCOPE, "INVALID_OPTIONS", `gc: option ${field} is invalid (${String(value)}).`, { field, value, hint });
  if (typeof o?.planRoot !== "string" || o.planRoot === "") throw bad("planRoot", o?.planRoot, "pass the plan root folder");
  const { keep, olderThan } = checkRetentionLimits(o);
  if (typeof o.now !== "function") throw bad("now", typeof o.now, "pass a clock: () => Date");
  const staleMs = o.staleMs ?? DEFAULT_LOCK_STALE_MS;
  return { planRoot: path.resolve(o.planRoot), keep, olderThan, now: o.now, dryRun: o.dryRun === true, staleMs };
}
