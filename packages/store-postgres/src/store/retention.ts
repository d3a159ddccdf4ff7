/** Retention: removes finished runs past `keep` / `olderThan`, never a live-leased, unreadable or rerun-pending one. */
import { isFinished } from "@phasekit/core";
import { awaitsRerun, checkRetentionLimits, retentionVerdicts, validateMetadata } from "@phasekit/adapters-pi/store-kit";
import { type GcReport, type StoreGcOptions, type WorkflowMetadata } from "@phasekit/adapters-pi";
import { query, type Db } from "../db/db.js";
import { runLabel } from "./runs.js";

/**
 * Retention's rule (the limits, the order, the reasons: adapters-pi's retentionVerdicts), on the runs' rows; each delete re-checks generation and lease in its own statement. A run's age
 * for `olderThan` is measured on the database's clock (since its last metadata write, `written_at`), never the
 * writer's: a machine whose clock is off would make runs look older or younger than they are. `keep` orders by
 * the runs' own updatedAt, as on the fs store. A finished run that waits for a rerun is kept by the fs store's rule
 * (`awaitsRerun`, over the run's superseded step rows and their spent flags: supersede.ts sets both).
 */
export async function gcRuns(db: Db, options: StoreGcOptions): Promise<GcReport> {
  const limits = checkRetentionLimits(options);
  const rows = (
    await query<{ slug: string; metadata: unknown; live: boolean; age_ms: number | null }>(
      db,
      `SELECT slug, metadata, (holder IS NOT NULL AND lease_until >= now()) AS live,
         extract(epoch FROM now() - written_at) * 1000 AS age_ms FROM phasekit_runs WHERE namespace = $1`,
      [db.namespace],
    )
  ).rows;
  const report: GcReport = { removed: [], kept: [] };
  const finished: Array<{ slug: string; m: WorkflowMetadata; updatedAt: string; live: boolean; ageMs: number }> = [];
  for (const row of rows) {
    const entry = { slug: row.slug, runDir: runLabel(db, row.slug) };
    if (row.metadata === null) {
      report.kept.push({ ...entry, reason: "no-metadata" });
      continue;
    }
    const v = validateMetadata(entry.runDir, row.metadata);
    if (!v.ok) report.kept.push({ ...entry, reason: "corrupt-metadata", error: v.error.message });
    else if (!isFinished(v.metadata)) report.kept.push({ ...entry, reason: "active", status: v.metadata.status, updatedAt: v.metadata.updatedAt });
    else finished.push({ slug: row.slug, m: v.metadata, updatedAt: v.metadata.updatedAt, live: row.live, ageMs: row.age_ms === null ? 0 : Number(row.age_ms) });
  }
  for (const { run, reason } of retentionVerdicts(finished, limits)) {
    const { slug, m, live } = run;
    const entry = { slug, runDir: runLabel(db, slug), status: m.status, updatedAt: m.updatedAt };
    if (reason === undefined) report.kept.push({ ...entry, reason: "within-limits" });
    else if (live) report.kept.push({ ...entry, reason: "locked" });
    else if (awaitsRerun(await supersededSteps(db, slug))) report.kept.push({ ...entry, reason: "rerun-pending" });
    else if (options.dryRun) report.removed.push({ ...entry, reason });
    else {
      // Journal, steps, artifacts and control rows go with the run (their foreign keys' ON DELETE CASCADE; steps
      // and artifacts by the run's delete trigger, sql/010). A rerun marked since the
      // check above (it flags rows, the generation stays) keeps the run: the statement itself re-checks the flags.
      const d = await query(
        db,
        `DELETE FROM phasekit_runs r WHERE namespace = $1 AND slug = $2 AND generation = $3 AND (holder IS NULL OR lease_until < now())
           AND NOT EXISTS (SELECT 1 FROM phasekit_steps s WHERE s.namespace = r.namespace AND s.slug = r.slug AND s.record @> '{"superseded": true}' AND NOT s.record @> '{"rerunSpent": true}')`,
        [db.namespace, slug, m.generation],
      );
      if (d.rowCount === 1) report.removed.push({ ...entry, reason });
      else report.kept.push({ ...entry, reason: "changed-meanwhile" });
    }
  }
  return report;
}

/** The superseded and spent flags of the run's step rows (supersede.ts sets them), each pair once: what `awaitsRerun` reads. */
async function supersededSteps(db: Db, slug: string): Promise<Array<{ superseded: boolean; rerunSpent: boolean }>> {
  const r = await query<{ superseded: boolean; rerunSpent: boolean }>(
    db,
    `SELECT DISTINCT coalesce(record->'superseded' = 'true'::jsonb, false) AS superseded, coalesce(record->'rerunSpent' = 'true'::jsonb, false) AS "rerunSpent"
       FROM phasekit_steps WHERE namespace = $1 AND slug = $2`,
    [db.namespace, slug],
  );
  return r.rows;
}
