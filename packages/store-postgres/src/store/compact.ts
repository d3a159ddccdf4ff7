/**
 * Compaction of a run on PostgreSQL: deletes the artifacts no step record references and no kept artifact's
 * delta chain needs as a base (output-chain.ts), fenced. The run row is
 * taken first, in its own statement, and only then does the DELETE start: in READ COMMITTED each statement reads
 * from a snapshot taken when it starts, so a DELETE that waited for the row inside its own statement would judge
 * "unreferenced" from before a step that was acknowledged meanwhile, and delete that step's output.
 */
import type { WorkflowError } from "@phasekit/core";
import { checkedOut, fencedWrite, fenceParams, fenceSql, type Db, type Fence } from "../db/db.js";
import { storeError } from "../db/errors.js";

/** Removes the run's unreferenced artifacts; how many. `refused` says why when the fence does not hold. */
export async function compactArtifacts(db: Db, slug: string, fence: Fence, refused: () => Promise<WorkflowError>): Promise<number> {
  const removed = await fencedWrite(fence, () => compactOnce(db, slug, fence));
  if (removed === undefined) throw await refused();
  return removed;
}

/** One fenced compaction transaction; undefined when the fence refused it. */
async function compactOnce(db: Db, slug: string, fence: Fence): Promise<number | undefined> {
  const [e, t] = fenceParams(fence);
  let client;
  try {
    client = await db.pool.connect();
  } catch (error) {
    throw storeError("write", slug, "compact", error);
  }
  const release = checkedOut(client);
  let broken: unknown;
  try {
    await client.query("BEGIN");
    // FOR UPDATE waits for every step statement in flight (they hold FOR SHARE) and holds off new ones until COMMIT.
    const f = await client.query(`SELECT 1 FROM phasekit_runs r WHERE r.namespace = $1 AND r.slug = $2 AND ${fenceSql("$3", "$4")} FOR UPDATE`, [db.namespace, slug, e, t]);
    if (f.rowCount !== 1) {
      await client.query("ROLLBACK");
      return undefined;
    }
    // Kept: every output a step record names, and every base on its chain, walked to the end (UNION ends a loop).
    const d = await client.query(
      `WITH RECURSIVE keep(fp) AS (
         SELECT s.record->>'outputFingerprint' FROM phasekit_steps s WHERE s.namespace = $1 AND s.slug = $2 AND s.record ? 'outputFingerprint'
         UNION
         SELECT b.base FROM keep k CROSS JOIN LATERAL (SELECT a.base FROM phasekit_artifacts a WHERE a.namespace = $1 AND a.slug = $2 AND a.fingerprint = k.fp) b
         WHERE b.base IS NOT NULL)
       DELETE FROM phasekit_artifacts a WHERE a.namespace = $1 AND a.slug = $2 AND NOT EXISTS (SELECT 1 FROM keep WHERE keep.fp = a.fingerprint)`,
      [db.namespace, slug],
    );
    await client.query("COMMIT");
    return d.rowCount ?? 0;
  } catch (error) {
    broken = error;
    await client.query("ROLLBACK").catch(() => undefined);
    throw storeError("write", slug, "compact", error);
  } finally {
    // A connection that failed mid-transaction is not handed to the next statement.
    release(broken);
  }
}
