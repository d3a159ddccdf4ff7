/**
 * The statements a holder writes a step with, each one round trip, fenced, named (prepared once per connection):
 * - `started`: the record alone, committed without waiting for the WAL flush;
 * - `record`: the record alone, durable (a failed step);
 * - `completed` / `repair`: the artifact and the record together, durable; `completedFresh`: `completed` for a
 *   step the holder knows has no row (a plain INSERT of the record, not the upsert).
 * The record-only statements carry no artifact part: on the miss's first round trip, the one added to a bare
 * `INSERT; COMMIT`, an artifact CTE that writes nothing still cost its planning and execution (measured in
 * docs/benchmarks.md, "PostgreSQL store: a durable step").
 *
 * Parameters: $1 namespace, $2 slug, $3 epoch, $4 token (the fence), $5 step id, $6 the record as JSON text;
 * with an artifact, $7 fingerprint, $8 body, $9 base. The record-only statements answer `fenced` (1 when the
 * fence let it write; never the row count, which the `started` guard can make 0). The artifact statements answer
 * no row: their command tag counts the artifact rows this statement wrote (1 or 0), and a fence that refuses
 * raises FENCE_REFUSED instead (sql/009), so nothing of the statement is written. A row in the answer cost the
 * server its InitPlans and the reply, and the client the row's parsing, right on the miss's one round trip.
 */
import { fenceSql } from "../db/db.js";

/** One statement of a step write: its name and text. */
export interface StepWrite {
  readonly name: string;
  readonly text: string;
}

// The fence: the run row, locked FOR SHARE, when it still names this holder's epoch. A concurrent takeover waits
// for the statement, or the statement re-checks the row after the takeover committed (and finds the epoch changed).
const fence = (async: boolean): string =>
  `f AS (SELECT r.epoch${async ? ", set_config('synchronous_commit', 'off', true)" : ""} FROM phasekit_runs r
         WHERE r.namespace = $1 AND r.slug = $2 AND ${fenceSql("$3", "$4")} FOR SHARE)`;

// A `started` record never replaces the finished record of the same attempt (same startedAt, attempt and input),
// whatever order statements reach the table in.
// `fresh`: a plain INSERT, for a step the holder knows has no row: the upsert's speculative insertion (a conflict
// check before the row and a confirmation after it, one more WAL record) cost ~10 µs of the miss's statement. A
// row there after all (written by hand) fails it with a unique violation, and the upsert is sent instead.
const record = (from: string, fresh = false): string => `w AS (INSERT INTO phasekit_steps AS s (namespace, slug, step_id, record, epoch, first_started)
         SELECT $1, $2, $5, $6::jsonb, ${from}.epoch, $6::jsonb->>'startedAt' FROM ${from}${fresh ? ")" : `
         ON CONFLICT (namespace, slug, step_id) DO UPDATE SET record = EXCLUDED.record, epoch = EXCLUDED.epoch
         WHERE NOT (EXCLUDED.record->>'status' = 'started' AND s.record->>'status' <> 'started'
           AND s.record->>'startedAt' = EXCLUDED.record->>'startedAt' AND s.record->>'attempt' = EXCLUDED.record->>'attempt'
           AND s.record->>'inputFingerprint' = EXCLUDED.record->>'inputFingerprint'))`}`;

// `repair`: the row there (the same fingerprint, content that failed its check) is replaced by this whole value;
// without it, a row already there is kept (the same content), and the command tag counts 0: not written now. DO
// NOTHING, not an update that never applies: that one still locked the row there, a WAL record per reuse of
// stored content.
const artifact = (repair: boolean): string =>
  `INSERT INTO phasekit_artifacts (namespace, slug, fingerprint, body, base) SELECT $1, $2, $7, $8, $9 FROM g
         ON CONFLICT (namespace, slug, fingerprint) ${repair ? "DO UPDATE SET body = EXCLUDED.body, base = EXCLUDED.base" : "DO NOTHING"}`;

// The fence's epoch, or the refusal raised (the function runs only when `f` found no row): `g` is read twice, so
// it is evaluated once.
const refusedUnlessFenced = `g AS (SELECT coalesce((SELECT f.epoch FROM f), phasekit_fence_refused($1, $2)) AS epoch)`;

const recordOnly = (async: boolean): string => `WITH ${fence(async)}, ${record("f")} SELECT count(*) AS fenced FROM f`;
const withArtifact = (repair: boolean, fresh = false): string => `WITH ${fence(false)}, ${refusedUnlessFenced}, ${record("g", fresh)} ${artifact(repair)}`;

/** The SQLSTATE the artifact statements raise when their fence refuses (sql/009_fence_refusal.sql). */
export const FENCE_REFUSED = "PKF01";

/** PostgreSQL's unique violation: `completedFresh` met a row after all. */
export const UNIQUE_VIOLATION = "23505";

/** The statements, built once. */
export const STEP_WRITES = {
  started: { name: "phasekit_put_step_started", text: recordOnly(true) },
  record: { name: "phasekit_put_step_record", text: recordOnly(false) },
  completed: { name: "phasekit_put_step_completed", text: withArtifact(false) },
  completedFresh: { name: "phasekit_put_step_completed_fresh", text: withArtifact(false, true) },
  repair: { name: "phasekit_put_step_repair", text: withArtifact(true) },
} as const satisfies Record<string, StepWrite>;
