/**
 * Pause and stop requests for runs held on other machines: any process may file one; only the holder (by its
 * epoch) clears it.
 */
import type { Db } from "../db/db.js";
import { fenceParams, fenceSql } from "../db/db.js";
import { storeError } from "../db/errors.js";
import { ensureRun } from "./runs.js";

/** The kinds of control request. */
export type ControlKind = "pause" | "stop";

/** A filed request: who asked, when and why. */
export interface PgControlRequest {
  kind: ControlKind;
  requestedAt: string;
  reason?: string;
  by?: string;
}

/** Files (or replaces) a request of `kind` for run `slug`. */
export async function fileControl(db: Db, slug: string, request: PgControlRequest): Promise<void> {
  try {
    await ensureRun(db, slug);
    await db.pool.query(
      `INSERT INTO phasekit_control (namespace, slug, kind, request) VALUES ($1, $2, $3, $4)
       ON CONFLICT (namespace, slug, kind) DO UPDATE SET request = EXCLUDED.request`,
      [db.namespace, slug, request.kind, request],
    );
  } catch (error) {
    throw storeError("write", slug, `request ${request.kind}`, error);
  }
}

/** The pending requests of run `slug` (stop first). */
export async function readControl(db: Db, slug: string): Promise<PgControlRequest[]> {
  try {
    const r = await db.pool.query<{ request: PgControlRequest }>("SELECT request FROM phasekit_control WHERE namespace = $1 AND slug = $2 ORDER BY kind DESC", [db.namespace, slug]);
    return r.rows.map((x) => x.request);
  } catch (error) {
    throw storeError("read", slug, "read control requests", error);
  }
}

/** Clears a honoured request; refused (false) unless this store holds the run, or nobody does. */
export async function clearControl(db: Db, slug: string, kind: ControlKind): Promise<boolean> {
  const [e, t] = fenceParams(db, slug);
  try {
    const r = await db.pool.query(
      `DELETE FROM phasekit_control c USING phasekit_runs r
       WHERE c.namespace = $1 AND c.slug = $2 AND c.kind = $5 AND r.namespace = c.namespace AND r.slug = c.slug AND ${fenceSql("$3", "$4")}`,
      [db.namespace, slug, e, t, kind],
    );
    return r.rowCount === 1;
  } catch (error) {
    throw storeError("write", slug, `clear ${kind}`, error);
  }
}
