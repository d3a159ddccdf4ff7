/**
 * Reading stored outputs: the wanted artifacts and, in the same statement, every base their delta chains name
 * (output-chain.ts), resolved and checked whole against their fingerprints.
 */
import { query, type Db } from "../db/db.js";
import { storeError } from "../db/errors.js";
import { resolveOutputs, type ArtifactRow, type ResolvedOutput } from "./output-chain.js";

/**
 * The outputs `wanted` of run `slug`: the first always, the others while the running total of their own stored
 * bytes stays within `budget`; with each, the rows of its chain. A wanted output with no row is absent from the
 * answer (artifact-missing to the caller).
 */
export async function readOutputs(db: Db, slug: string, wanted: readonly string[], budget: number, what: string): Promise<Map<string, ResolvedOutput>> {
  let rows: ArtifactRow[];
  try {
    const r = await query<[string, string, string | null]>(db, {
      name: "phasekit_read_outputs_chained",
      // Each lookup is a LATERAL probe on the artifact's whole key, kept one by its own OFFSET 0 (the outer OFFSET 0
      // keeps the wanted list one probe per output): a plain LATERAL subquery is flattened into a join, which the
      // planner ran as a scan of every artifact of the run until the table was analyzed. UNION
      // (not UNION ALL) ends the walk on a loop a hand edit made: a row met again adds nothing.
      text: `WITH RECURSIVE w AS (
               SELECT fp, body, base FROM (
                 SELECT fp, body, base, n, sum(octet_length(body)) OVER (ORDER BY n) AS upto FROM (
                   SELECT u.fp, u.n, a.body, a.base FROM unnest($3::text[]) WITH ORDINALITY AS u(fp, n)
                   CROSS JOIN LATERAL (SELECT a.body, a.base FROM phasekit_artifacts a WHERE a.namespace = $1 AND a.slug = $2 AND a.fingerprint = u.fp OFFSET 0) a
                   OFFSET 0) s) t
               WHERE n = 1 OR upto <= $4),
             c(fp, body, base) AS (
               SELECT fp, body, base FROM w
               UNION
               SELECT b.fingerprint, b.body, b.base FROM c
               CROSS JOIN LATERAL (SELECT a.fingerprint, a.body, a.base FROM phasekit_artifacts a WHERE a.namespace = $1 AND a.slug = $2 AND a.fingerprint = c.base OFFSET 0) b)
             SELECT fp, body, base FROM c`,
      values: [db.namespace, slug, [...wanted], budget],
      rowMode: "array",
    });
    rows = r.rows.map(([fp, body, base]) => ({ fp, body, base }));
  } catch (error) {
    throw storeError("read", slug, what, error);
  }
  return resolveOutputs(rows, wanted);
}
