/**
 * The statements a holder writes a step with, each one round trip, fenced, named (prepared once per connection):
 * - `started`: the record alone, committed without waiting for the WAL flush;
 * - `record`: the record alone, durable (a failed step);
 * - `completed` / `repair`: the artifact and the record together, durable.
 * The record-only statements carry no artifact part: on the miss's first round trip, the one added to a bare
 * `INSERT; COMMIT`, an artifact CTE that writes nothing still cost its planning and execution (measured in
 * docs/benchmarks.md, "PostgreSQL store: a durable step").
 *
 * Parameters: $1 namespace, $2 slug, $3 epoch, $4 token (the fence), $5 step id, $6 the record as JSON text;
 * with an artifact, $7 fingerprint, $8 body, $9 base. Every statement answers `fenced` (1 when the fence let it
 * write; never the row count, which the `started` guard can make 0) and `inserted` (1 when this statement wrote
 * the artifact row).
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
const record = `w AS (INSERT INTO phasekit_steps AS s (namespace, slug, step_id, record, epoch, first_started)
         SELECT $1, $2, $5, $6::jsonb, f.epoch, $6::jsonb->>'startedAt' FROM f
         ON CONFLICT (namespace, slug, step_id) DO UPDATE SET record = EXCLUDED.record, epoch = EXCLUDED.epoch
         WHERE NOT (EXCLUDED.record->>'status' = 'started' AND s.record->>'status' <> 'started'
           AND s.record->>'startedAt' = EXCLUDED.record->>'startedAt' AND s.record->>'attempt' = EXCLUDED.record->>'attempt'
           AND s.record->>'inputFingerprint' = EXCLUDED.record->>'inputFingerprint'))`;

// `repair`: the row there (the same fingerprint, content that failed its check) is replaced by this whole value;
// without it, a row already there is kept (the same content), and `inserted` says it was not written now. DO
// NOTHING, not an update that never applies: that one still locked the row there, a WAL record per reuse of
// stored content.
const artifact = (repair: boolean): string =>
  `a AS (INSERT INTO phasekit_artifacts (namespace, slug, fingerprint, body, base) SELECT $1, $2, $7, $8, $9 FROM f
         ON CONFLICT (namespace, slug, fingerprint) ${repair ? "DO UPDATE SET body = EXCLUDED.body, base = EXCLUDED.base" : "DO NOTHING"} RETURNING 1)`;

const recordOnly = (async: boolean): string => `WITH ${fence(async)}, ${record} SELECT count(*) AS fenced, 0 AS inserted FROM f`;
const withArtifact = (repair: boolean): string =>
  `WITH ${fence(false)}, ${artifact(repair)}, ${record} SELECT (SELECT count(*) FROM f) AS fenced, (SELECT count(*) FROM a) AS inserted`;

/** The statements, built once. */
export const STEP_WRITES = {
  started: { name: "phasekit_put_step_started", text: recordOnly(true) },
  record: { name: "phasekit_put_step_record", text: recordOnly(false) },
  completed: { name: "phasekit_put_step_completed", text: withArtifact(false) },
  repair: { name: "phasekit_put_step_repair", text: withArtifact(true) },
} as const satisfies Record<string, StepWrite>;
