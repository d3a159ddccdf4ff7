/**
 * Pause and stop requests for runs held on other machines, behind the PlanStore control methods: any process
 * may file one (that is the point: the holder is busy running); only the holder (by its epoch), or anyone when
 * nobody holds the run, clears one. The filing rules are the fs store's, checked in the same statement that
 * files the request: the run exists and is not finished, and a pause needs a live holder.
 */
import { workflowError, type WorkflowError } from "@phasekit/core";
import { approvalMismatch, controlRefusal, FINISHED_STATUSES, newControlRequest, parseControlRequest, withdrawRefusal } from "@phasekit/adapters-pi/store-kit";
import { type ControlRequest, type ControlRequestInput, type ControlSignal } from "@phasekit/adapters-pi";
import { fencedWrite, fenceParams, fenceSql, query, type Db, type Fence } from "../db/db.js";
import { storableJson } from "../db/storable.js";
import { lockLost, storeError } from "../db/errors.js";
import { runLabel } from "./runs.js";

type Outcome<T> = ({ ok: true } & T) | { ok: false; error: WorkflowError };

const FINISHED = [...FINISHED_STATUSES];

/**
 * Files (or replaces) a `signal` request for run `slug`, under the filing rules, in one statement. The request is
 * stamped with the run's metadata generation read by that statement (`isSupersededRequest`): a request filed
 * before the run ended belongs to that run, and a run re-entered later ignores it even if nobody cleared it.
 */
export async function fileControl(db: Db, slug: string, signal: ControlSignal, input: ControlRequestInput): Promise<Outcome<{ request: ControlRequest }>> {
  const mismatch = approvalMismatch(slug, signal, input.approval);
  if (mismatch !== undefined) return { ok: false, error: mismatch };
  const request = storableJson(newControlRequest(signal, input.reason ?? `${signal} requested`, input.now, undefined, input.approval));
  try {
    // FOR SHARE: a status write (UPDATE of the run row) cannot slip between the check, the stamp and the insert.
    const r = await query<{ generation: string | null }>(
      db,
      `WITH run AS (
         SELECT r.generation FROM phasekit_runs r WHERE r.namespace = $1 AND r.slug = $2 AND r.metadata IS NOT NULL AND NOT (r.status = ANY($5::text[]))
           AND ($3 <> 'pause' OR (r.status = 'running' AND r.holder IS NOT NULL AND r.lease_until > now()))
         FOR SHARE)
       INSERT INTO phasekit_control (namespace, slug, kind, request)
         SELECT $1, $2, $3, CASE WHEN run.generation IS NULL THEN $4::jsonb ELSE $4::jsonb || jsonb_build_object('generation', run.generation) END FROM run
       ON CONFLICT (namespace, slug, kind) DO UPDATE SET request = EXCLUDED.request
       RETURNING request->>'generation' AS generation`,
      [db.namespace, slug, signal, request, FINISHED],
    );
    const row = r.rows[0];
    if (r.rowCount === 1 && row !== undefined) return { ok: true, request: row.generation === null ? request : { ...request, generation: Number(row.generation) } };
    return { ok: false, error: await whyNotFiled(db, slug, signal) };
  } catch (error) {
    return { ok: false, error: storeError("write", slug, `request ${signal}`, error) };
  }
}

/** The pending request of run `slug` (a stop before a pause), or only `signal`'s; a malformed row is CORRUPT_FILE. */
export async function readControl(db: Db, slug: string, signal?: ControlSignal): Promise<Outcome<{ request: ControlRequest | null }>> {
  let rows: Array<{ kind: ControlSignal; request: unknown }>;
  try {
    const r = await query<{ kind: ControlSignal; request: unknown }>(
      db,
      // Without a signal: the request a runner honours at a step boundary (a stop before a pause); an approve
      // request is read only by a run that waits for one.
      "SELECT kind, request FROM phasekit_control WHERE namespace = $1 AND slug = $2 AND (($3::text IS NULL AND kind IN ('stop', 'pause')) OR kind = $3) ORDER BY kind DESC LIMIT 1",
      [db.namespace, slug, signal ?? null],
    );
    rows = r.rows;
  } catch (error) {
    return { ok: false, error: storeError("read", slug, "read control requests", error) };
  }
  const row = rows[0];
  if (row === undefined) return { ok: true, request: null };
  return parseControlRequest(row.request, row.kind, `${runLabel(db, slug)} (${row.kind} request)`);
}

/**
 * Clears a honoured request if it is still that very request (cleared: false when it is gone or was replaced).
 * Fenced like every holder's write: LOCK_LOST when `fence`'s lease was displaced; refused (cleared: false) for a
 * writer holding no lease while someone else holds the run.
 */
export async function clearControl(db: Db, slug: string, fence: Fence, request: ControlRequest): Promise<Outcome<{ cleared: boolean }>> {
  const [e, t] = fenceParams(fence);
  try {
    const cleared = await fencedWrite(fence, async () => {
      const r = await query(
        db,
        `DELETE FROM phasekit_control c USING phasekit_runs r
         WHERE c.namespace = $1 AND c.slug = $2 AND c.kind = $5 AND c.request = $6::jsonb
           AND r.namespace = c.namespace AND r.slug = c.slug AND ${fenceSql("$3", "$4")}`,
        [db.namespace, slug, e, t, request.signal, storableJson(request)],
      );
      return r.rowCount === 1 ? true : undefined;
    });
    if (cleared === true) return { ok: true, cleared: true };
    if (e !== null) {
      const now = await query<{ epoch: string; holder: string | null }>(db, "SELECT epoch, holder FROM phasekit_runs WHERE namespace = $1 AND slug = $2", [db.namespace, slug]);
      const row = now.rows[0];
      if (row !== undefined && (Number(row.epoch) !== e || row.holder !== t)) return { ok: false, error: lockLost(slug, e, `clear ${request.signal}`) };
    }
    return { ok: true, cleared: false };
  } catch (error) {
    return { ok: false, error: storeError("write", slug, `clear ${request.signal}`, error) };
  }
}

/**
 * Takes back a pending pause if it is still that very request, whoever holds the run: the filer's side, unfenced
 * like filing (a holder's clear is fenced, so a displaced holder never drops a request the new one must see).
 */
export async function withdrawControl(db: Db, slug: string, request: ControlRequest): Promise<Outcome<{ withdrawn: boolean }>> {
  const refused = withdrawRefusal(slug, request);
  if (refused !== undefined) return { ok: false, error: refused };
  try {
    const r = await query(db, "DELETE FROM phasekit_control WHERE namespace = $1 AND slug = $2 AND kind = 'pause' AND request = $3::jsonb", [db.namespace, slug, storableJson(request)]);
    return { ok: true, withdrawn: r.rowCount === 1 };
  } catch (error) {
    return { ok: false, error: storeError("write", slug, "withdraw pause", error) };
  }
}

async function whyNotFiled(db: Db, slug: string, signal: ControlSignal): Promise<WorkflowError> {
  const r = await query<{ status: string | null; live: boolean }>(
    db,
    "SELECT status, (holder IS NOT NULL AND lease_until > now()) AS live FROM phasekit_runs WHERE namespace = $1 AND slug = $2 AND metadata IS NOT NULL",
    [db.namespace, slug],
  );
  const row = r.rows[0];
  // The fs store's rule and words (controlRefusal); the filing statement decided it atomically, so a run that is
  // running and leased now changed while the request was filed.
  const refused = await controlRefusal(slug, signal, row?.status ?? null, runLabel(db, slug), async () => row?.live === true);
  return (
    refused ??
    workflowError("control", "NOT_RUNNING", `run ${slug} cannot be paused: its status changed while the request was filed.`, {
      value: row?.status,
      hint: "a pause applies to a running run; resume the run first, or send stop to end it",
    })
  );
}
