/**
 * New run ids reserved where the runs live: the run's row, under the table's primary key. The fs store reserves
 * an id by creating its folder; on PostgreSQL a local folder says nothing about other machines, so the draw is
 * checked by an INSERT that a second machine's identical draw cannot repeat (ON CONFLICT: draw again).
 */
import { generateRunId, type RandomBytes } from "@phasekit/adapters-pi/store-kit";
import { query, type Db } from "../db/db.js";
import { storeError } from "../db/errors.js";

export type { RandomBytes };

/** A fresh run id whose row this call created (no metadata, no holder); MAX_ATTEMPTS_REACHED after 10 taken draws. */
export async function reserveRunId(db: Db, random?: RandomBytes): Promise<string> {
  return generateRunId(async (candidate) => {
    try {
      // Idempotent retry is safe: a lost reply that did insert is "taken" on the second try, so we draw again.
      const r = await query(db, "INSERT INTO phasekit_runs (namespace, slug) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1", [db.namespace, candidate]);
      return r.rowCount !== 1;
    } catch (error) {
      throw storeError("write", candidate, "reserving a new run id", error);
    }
  }, random);
}
