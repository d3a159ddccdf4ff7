/**
 * The runs forked from a run, for the inspector's tree of forks, in one statement. A fork's `forked` event
 * (adapters-pi run/fork-store.ts) is written under the fork's lock right after its first metadata write, so it is
 * among the first entries of its journal: each run's first few entries are read through the journal's primary
 * key, never the whole journal of a namespace whose runs may hold thousands of entries each, and no index over
 * the entries' JSON is needed.
 */
import { query, type Db } from "../db/db.js";
import { storeError } from "../db/errors.js";

/** How many of a run's first journal entries are looked at (the fork writes its metadata, then `forked`). */
const HEAD_ENTRIES = 4;

const FORKS_SQL = `
SELECT r.slug, j.entry->'data'->>'at' AS at
FROM phasekit_runs r
CROSS JOIN LATERAL (SELECT entry FROM phasekit_journal WHERE namespace = r.namespace AND slug = r.slug ORDER BY seq LIMIT ${HEAD_ENTRIES}) j
WHERE r.namespace = $1 AND r.slug <> $2 AND j.entry->>'event' = 'forked' AND j.entry->'data'->>'from' = $2
  AND jsonb_typeof(j.entry->'data'->'at') = 'string'
ORDER BY r.slug COLLATE "C"`;

/** The runs forked from `slug` and the step each was forked at, sorted by id. */
export async function listForks(db: Db, slug: string): Promise<Array<{ slug: string; at: string }>> {
  try {
    return (await query<{ slug: string; at: string }>(db, FORKS_SQL, [db.namespace, slug])).rows.map((r) => ({ slug: r.slug, at: r.at }));
  } catch (error) {
    throw storeError("read", slug, "listForks", error);
  }
}
