/**
 * A rerun on PostgreSQL (`rerunFrom({ store })`): the records of the steps it names are flagged `superseded` in
 * place, in one statement fenced by the holder's lease. Nothing is deleted: each record stays as it was, flag
 * added, until its step runs again and writes its next record; `decideStep` (adapters-pi's store-kit) reads the
 * flag and reruns the step, the same rule the file store's rerun marks feed. The table keeps one row per step,
 * so the flag on the row is the mark: a record written after it replaces the row and carries none.
 */
import { fencedWrite, fenceParams, fenceSql, query, type Db, type Fence } from "../db/db.js";
import { storeError } from "../db/errors.js";

/** Flags the records of `keys` superseded; false when the fence refused the statement (the lease was lost). */
export async function supersedeSteps(db: Db, slug: string, fence: Fence, keys: readonly string[]): Promise<boolean> {
  const [e, t] = fenceParams(fence);
  try {
    const text = `WITH f AS (SELECT r.epoch FROM phasekit_runs r WHERE r.namespace = $1 AND r.slug = $2 AND ${fenceSql("$3", "$4")} FOR SHARE),
            w AS (UPDATE phasekit_steps s SET record = s.record || '{"superseded": true}'::jsonb, epoch = f.epoch FROM f
                  WHERE s.namespace = $1 AND s.slug = $2 AND s.step_id = ANY($5::text[]))
       SELECT count(*) AS fenced FROM f`;
    const put = async (): Promise<true | undefined> => (Number((await query<{ fenced: string }>(db, text, [db.namespace, slug, e, t, [...keys]])).rows[0]?.fenced) === 1 ? true : undefined);
    return (await fencedWrite(fence, put)) === true;
  } catch (error) {
    throw storeError("write", slug, `the rerun of ${keys.length} step(s)`, error);
  }
}
