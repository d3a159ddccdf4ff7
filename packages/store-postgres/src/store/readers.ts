/**
 * What readers (the `phasekit` CLI and the inspector given `--store postgres://…`) ask of a run beyond the
 * port's reads: who holds its lease now, judged by the database's clock, and a completed step's stored output.
 * Never fenced, never written: a reader holds no lease.
 */
import { fingerprint } from "@phasekit/adapters-pi/store-kit";
import type { LockOwner, StepRecord, StoreLeaseView } from "@phasekit/adapters-pi";
import { query, type Db } from "../db/db.js";
import { storeError } from "../db/errors.js";
import { readOutputs } from "./artifact-reads.js";

/** The run's lease as a reader sees it; null when nobody holds it (released, or never taken). */
export async function readLease(db: Db, slug: string): Promise<StoreLeaseView | null> {
  try {
    const r = await query<{ owner: unknown; until: Date; live: boolean }>(
      db,
      `SELECT holder_owner AS owner, lease_until AS until, lease_until >= now() AS live FROM phasekit_runs
       WHERE namespace = $1 AND slug = $2 AND holder IS NOT NULL AND lease_until IS NOT NULL`,
      [db.namespace, slug],
    );
    const row = r.rows[0];
    if (row === undefined) return null;
    return { owner: ownerOf(row.owner), live: row.live, until: new Date(row.until).toISOString() };
  } catch (error) {
    throw storeError("read", slug, "readLease", error);
  }
}

/** The output a completed `record` names, checked against its content address (a row edited by hand is "corrupt"). */
export async function readStepOutput(db: Db, slug: string, record: StepRecord): Promise<StoredOutput> {
  const fp = record.outputFingerprint;
  if (record.status !== "completed" || fp === undefined) return { ok: false, reason: "missing", message: `step ${record.stepId} has no completed output` };
  // With the bases of its chain when it is stored as a delta (output-chain.ts).
  const read = (await readOutputs(db, slug, [fp], 0, `the output of step ${record.stepId}`)).get(fp);
  const checked = read === undefined || read.ok ? checkOutput(read?.text, fp) : read;
  if (checked.ok) return { ok: true, text: (read as { text: string }).text };
  return checked.reason === "artifact-missing"
    ? { ok: false, reason: "missing", message: `no artifact ${fp} in phasekit_artifacts` }
    : { ok: false, reason: "corrupt", message: `artifact ${fp} does not hash to its fingerprint` };
}

type StoredOutput = { ok: true; text: string } | { ok: false; reason: "missing" | "corrupt"; message: string };

/** A stored output's check, as the runner makes it before a reuse. */
export type CheckedOutput = { ok: true; output: unknown } | { ok: false; reason: "artifact-missing" | "artifact-corrupt" };

/** A stored output `body` checked against its content address `fp` (a row edited by hand is rerun). */
export function checkOutput(body: string | undefined, fp: string): CheckedOutput {
  if (body === undefined) return { ok: false, reason: "artifact-missing" };
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { ok: false, reason: "artifact-corrupt" };
  }
  return fingerprint(value) === fp ? { ok: true, output: value } : { ok: false, reason: "artifact-corrupt" };
}

/** A lease row's `holder_owner` as a LockOwner (fields of the wrong type left out). */
export function ownerOf(raw: unknown): LockOwner {
  const o = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
  return {
    tool: typeof o["tool"] === "string" ? o["tool"] : "?",
    ...(typeof o["pid"] === "number" ? { pid: o["pid"] } : {}),
    ...(typeof o["host"] === "string" ? { host: o["host"] } : {}),
  };
}
