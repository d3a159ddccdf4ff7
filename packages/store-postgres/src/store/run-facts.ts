/**
 * What readers' views of many runs, or of one run watched, need from the database in one statement each:
 * `phasekit list` (every run with its lease and step facts) and the inspector's change stream (a signature of
 * one run). Both leave the step records in the server: `list` sends two step ids per run, and the signature
 * reads no step row at all (a count the database keeps).
 */
import { RESERVED_STEP_PREFIX, validateMetadata } from "@phasekit/adapters-pi/store-kit";
import type { PlanRunEntry, StoreRunFacts } from "@phasekit/adapters-pi";
import { query, type Db } from "../db/db.js";
import { storeError } from "../db/errors.js";
import { ownerOf } from "./readers.js";
import { runLabel } from "./runs.js";

/** A `list()` entry from a run row's metadata (null: a reserved run with none yet; unreadable: its error). */
export function runEntry(db: Db, slug: string, metadata: unknown): PlanRunEntry {
  if (metadata === null) return { slug, ok: true, metadata: null };
  const v = validateMetadata(runLabel(db, slug), metadata);
  return v.ok ? { slug, ok: true, metadata: v.metadata } : { slug, ok: false, error: v.error };
}

// The step facts are stepFacts' (adapters-pi store/run-steps.ts) over the body's steps (phasekit's own entries,
// keys starting with RESERVED_STEP_PREFIX ($2), left out as every reader leaves them out): the latest started
// record by startedAt, the latest completed by finishedAt; step_id only breaks exact ties.
const LIST_SQL = `
SELECT r.slug, r.metadata,
  (r.holder IS NOT NULL AND r.lease_until IS NOT NULL) AS held, r.holder_owner AS owner, r.lease_until AS until, r.lease_until >= now() AS live,
  (SELECT s.step_id FROM phasekit_steps s WHERE s.namespace = r.namespace AND s.slug = r.slug AND s.record->>'status' = 'started'
     AND NOT starts_with(s.step_id, $2) ORDER BY s.record->>'startedAt' DESC, s.step_id LIMIT 1) AS current,
  (SELECT s.step_id FROM phasekit_steps s WHERE s.namespace = r.namespace AND s.slug = r.slug AND s.record->>'status' = 'completed'
     AND NOT starts_with(s.step_id, $2) ORDER BY coalesce(s.record->>'finishedAt', '') DESC, s.step_id LIMIT 1) AS last
FROM phasekit_runs r WHERE r.namespace = $1 ORDER BY r.slug COLLATE "C"`;

interface ListRow {
  slug: string;
  metadata: unknown;
  held: boolean;
  owner: unknown;
  until: Date | null;
  live: boolean | null;
  current: string | null;
  last: string | null;
}

/** Every run of the namespace with its lease (as `readLease` gives it) and step facts, in one statement. */
export async function listRunFacts(db: Db): Promise<StoreRunFacts[]> {
  let rows: ListRow[];
  try {
    rows = (await query<ListRow>(db, LIST_SQL, [db.namespace, RESERVED_STEP_PREFIX])).rows;
  } catch (error) {
    throw storeError("read", "*", "list", error);
  }
  return rows.map((row) => ({
    ...runEntry(db, row.slug, row.metadata),
    lease: row.held && row.until !== null ? { owner: ownerOf(row.owner), live: row.live === true, until: new Date(row.until).toISOString() } : null,
    steps: { current: row.current, last: row.last },
  }));
}

// What a reader shows of a run changes only with these: the run's write count, the holder (epoch, owner) and
// whether its lease is live (not its renewals). The count (sql/007, sql/008) is raised by the database in every
// statement that writes a commit record, a journal entry, a control request or the metadata, or deletes a step
// row, a hand edit included; step rows written through this package are counted by their writer just after they
// land (write-count.ts). Two rows read through their primary keys: no step record is read, however many the run
// holds.
const SIGNATURE_SQL = `
SELECT ROW(w.writes, r.epoch, r.holder IS NOT NULL, r.lease_until >= now(), md5(r.holder_owner::text))::text AS sig
FROM phasekit_runs r LEFT JOIN phasekit_run_writes w ON w.namespace = r.namespace AND w.slug = r.slug
WHERE r.namespace = $1 AND r.slug = $2`;

/** A value that changes whenever anything a reader shows of run `slug` may have changed ("-" for no run). */
export async function runSignature(db: Db, slug: string): Promise<string> {
  try {
    const r = await query<{ sig: string }>(db, SIGNATURE_SQL, [db.namespace, slug]);
    return r.rows[0]?.sig ?? "-";
  } catch (error) {
    throw storeError("read", slug, "runSignature", error);
  }
}
