/**
 * A rerun on PostgreSQL (`rerunFrom({ store })`): the records of the steps it names are flagged `superseded` in
 * place, in one statement fenced by the holder's lease. Nothing is deleted: each record stays as it was, flag
 * added, until its step runs again and writes its next record; `decideStep` (adapters-pi's store-kit) reads the
 * flag and reruns the step, the same rule the file store's rerun marks feed. The table keeps one row per step,
 * so the flag on the row is the mark: a record written after it replaces the row and carries none.
 *
 * A run that ends without reaching a flagged step spends its mark (adapters-pi engine/rerun-spent.ts): the row
 * gains `rerunSpent` beside `superseded`, so retention stops keeping the run for it; a new mark clears it.
 */
import { fencedWrite, fenceParams, fenceSql, query, type Db, type Fence } from "../db/db.js";
import { storeError } from "../db/errors.js";
import { writeCountsOf } from "./write-count.js";

/** Flags the records of `keys` superseded; false when the fence refused the statement (the lease was lost). */
export async function supersedeSteps(db: Db, slug: string, fence: Fence, keys: readonly string[]): Promise<boolean> {
  // A spend of an earlier mark is undone: this mark waits for the next resume.
  return flagSteps(db, slug, fence, keys, `(s.record - 'rerunSpent') || '{"superseded": true}'::jsonb`, "", `the rerun of ${keys.length} step(s)`);
}

/** Flags the superseded records of `keys` spent; false when the fence refused the statement (the lease was lost). */
export async function spendSteps(db: Db, slug: string, fence: Fence, keys: readonly string[]): Promise<boolean> {
  return flagSteps(db, slug, fence, keys, `s.record || '{"rerunSpent": true}'::jsonb`, ` AND s.record @> '{"superseded": true}'`, `spending the rerun of ${keys.length} step(s)`);
}

async function flagSteps(db: Db, slug: string, fence: Fence, keys: readonly string[], record: string, only: string, what: string): Promise<boolean> {
  const [e, t] = fenceParams(fence);
  try {
    const text = `WITH f AS (SELECT r.epoch FROM phasekit_runs r WHERE r.namespace = $1 AND r.slug = $2 AND ${fenceSql("$3", "$4")} FOR SHARE),
            w AS (UPDATE phasekit_steps s SET record = ${record}, epoch = f.epoch FROM f
                  WHERE s.namespace = $1 AND s.slug = $2 AND s.step_id = ANY($5::text[])${only})
       SELECT count(*) AS fenced FROM f`;
    const put = async (): Promise<true | undefined> => (Number((await query<{ fenced: string }>(db, text, [db.namespace, slug, e, t, [...keys]])).rows[0]?.fenced) === 1 ? true : undefined);
    // Step rows are counted for readers by their writer (write-count.ts), not by the schema.
    return (await fencedWrite(fence, () => writeCountsOf(db).write(slug, put))) === true;
  } catch (error) {
    throw storeError("write", slug, what, error);
  }
}
