/** The memory store's `gc`: retention's rule (engine/retention-policy.ts) over its runs, nothing restated. */
import { isFinished, type WorkflowError } from "@phasekit/core";
import type { StepRecord } from "../engine/records.js";
import { awaitsRerun, checkRetentionLimits, retentionVerdicts, type GcReport } from "../engine/retention-policy.js";
import type { WorkflowMetadata } from "../store/metadata-schema.js";
import type { StoreGcOptions } from "../store/plan-store-port.js";

/** What gc needs of one run of the memory store. */
export interface MemoryGcRun {
  slug: string;
  metadata: { ok: true; metadata: WorkflowMetadata | null } | { ok: false; error: WorkflowError };
  /** A holder whose lease has not run out keeps its run. */
  live: boolean;
  /** The run's latest step records (a superseded one keeps the run for its rerun). */
  steps: () => Promise<StepRecord[]>;
}

/** Removes (by `remove`) the finished runs past the limits; a live-held or rerun-pending run is kept. */
export async function memoryGc(runs: readonly MemoryGcRun[], options: StoreGcOptions, remove: (slug: string) => void): Promise<GcReport> {
  const limits = checkRetentionLimits(options);
  const report: GcReport = { removed: [], kept: [] };
  const finished: Array<MemoryGcRun & { m: WorkflowMetadata; updatedAt: string; ageMs: number }> = [];
  const now = options.now().getTime();
  for (const run of runs) {
    const r = run.metadata;
    const entry = { slug: run.slug, runDir: `memory:${run.slug}` };
    if (!r.ok) report.kept.push({ ...entry, reason: "corrupt-metadata", error: r.error.message });
    else if (r.metadata === null) report.kept.push({ ...entry, reason: "no-metadata" });
    else if (!isFinished(r.metadata)) report.kept.push({ ...entry, reason: "active", status: r.metadata.status, updatedAt: r.metadata.updatedAt });
    else finished.push({ ...run, m: r.metadata, updatedAt: r.metadata.updatedAt, ageMs: now - Date.parse(r.metadata.updatedAt) });
  }
  for (const { run, reason } of retentionVerdicts(finished, limits)) {
    const entry = { slug: run.slug, runDir: `memory:${run.slug}`, status: run.m.status, updatedAt: run.m.updatedAt };
    if (reason === undefined) report.kept.push({ ...entry, reason: "within-limits" });
    else if (run.live) report.kept.push({ ...entry, reason: "locked" });
    else if (awaitsRerun(await run.steps())) report.kept.push({ ...entry, reason: "rerun-pending" });
    else {
      if (options.dryRun !== true) remove(run.slug);
      report.removed.push({ ...entry, reason });
    }
  }
  return report;
}
