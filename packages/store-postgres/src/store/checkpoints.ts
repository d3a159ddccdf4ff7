/**
 * The checkpoint store of one run on PostgreSQL: the latest record per step and per commit, outputs as
 * content-addressed artifacts. A step miss costs two statements: the `started` record, committed without
 * waiting for the WAL flush (like the fs log's unsynced `started` line: losing it only makes the next run say
 * "no-record" instead of "started"), and one durable statement that stores the artifact and the `completed`
 * record together. Both carry the holder's epoch and are refused by the database once it is displaced; the
 * `started` statement is acknowledged before the body runs, so a displaced holder never starts the work. A
 * miss costs one round trip plus one durable commit.
 */
import { workflowError, type WorkflowError } from "@phasekit/core";
import {
  canonicalJson,
  fingerprint,
  validateStepId,
  type CheckpointStore,
  type CommitIntent,
  type CommitRecord,
  type RerunReason,
  type StepOutcome,
  type StepRecord,
} from "@phasekit/adapters-pi";
import { fenceParams, fenceSql, type Db } from "../db/db.js";
import { lockLost, storeError } from "../db/errors.js";
import { runLabel, whyRefused } from "./runs.js";

interface Loaded {
  steps: Map<string, StepRecord>;
  commits: Map<string, CommitRecord>;
}

/** Creates the checkpoint store of run `slug` (its records are read once, on first use). */
export function createPgCheckpoints(db: Db, slug: string, now: () => Date): CheckpointStore {
  const file = `${runLabel(db, slug)}/checkpoints`;
  let loaded: Promise<Loaded> | undefined;
  const load = (): Promise<Loaded> => (loaded ??= readAll(db, slug).catch((e: unknown) => ((loaded = undefined), Promise.reject(e))));
  const stamp = (): string => now().toISOString();

  // One statement: the record (and, for a completion, its artifact) lands only if the run row still names this
  // holder's epoch. FOR SHARE makes a concurrent takeover wait for this statement, or this statement re-check
  // the row after the takeover committed (and find the epoch changed).
  // A `started` record never replaces the finished record of the same attempt (same startedAt, attempt and
  // input), whatever order statements reach the table in; `fenced` (not the row count) says whether the fence
  // let the statement write.
  async function putStep(record: StepRecord, artifact: { fp: string; body: string } | null, durable: boolean): Promise<void> {
    const [e, t] = fenceParams(db, slug);
    let ok: boolean;
    try {
      const text = `WITH f AS (SELECT r.epoch ${durable ? "" : ", set_config('synchronous_commit', 'off', true)"} FROM phasekit_runs r
                    WHERE r.namespace = $1 AND r.slug = $2 AND ${fenceSql("$3", "$4")} FOR SHARE),
              a AS (INSERT INTO phasekit_artifacts (namespace, slug, fingerprint, body)
                    SELECT $1, $2, $7, $8 FROM f WHERE $7::text IS NOT NULL ON CONFLICT DO NOTHING),
              w AS (INSERT INTO phasekit_steps AS s (namespace, slug, step_id, record, epoch)
                    SELECT $1, $2, $5, $6, f.epoch FROM f
                    ON CONFLICT (namespace, slug, step_id) DO UPDATE SET record = EXCLUDED.record, epoch = EXCLUDED.epoch
                    WHERE NOT (EXCLUDED.record->>'status' = 'started' AND s.record->>'status' <> 'started'
                      AND s.record->>'startedAt' = EXCLUDED.record->>'startedAt' AND s.record->>'attempt' = EXCLUDED.record->>'attempt'
                      AND s.record->>'inputFingerprint' = EXCLUDED.record->>'inputFingerprint'))
         SELECT count(*) AS fenced FROM f`;
      const values = [db.namespace, slug, e, t, record.stepId, record, artifact?.fp ?? null, artifact?.body ?? null];
      // A named (prepared) statement: each connection parses and plans it once, not on every step.
      const r = await db.pool.query<{ fenced: string }>({ name: durable ? "phasekit_put_step" : "phasekit_put_step_async", text, values });
      ok = Number(r.rows[0]?.fenced) === 1;
    } catch (error) {
      // The statement may have committed before the connection went: the next use re-reads the rows.
      loaded = undefined;
      throw storeError("write", slug, `step ${record.stepId} (${record.status})`, error);
    }
    if (!ok) throw await refused(`step ${record.stepId} (${record.status})`);
  }

  async function putCommit(record: CommitRecord): Promise<void> {
    const [e, t] = fenceParams(db, slug);
    let ok: boolean;
    try {
      const r = await db.pool.query(
        `WITH f AS (SELECT r.epoch FROM phasekit_runs r WHERE r.namespace = $1 AND r.slug = $2 AND ${fenceSql("$3", "$4")} FOR SHARE)
         INSERT INTO phasekit_commits (namespace, slug, commit_id, record, epoch) SELECT $1, $2, $5, $6, f.epoch FROM f
         ON CONFLICT (namespace, slug, commit_id) DO UPDATE SET record = EXCLUDED.record, epoch = EXCLUDED.epoch RETURNING 1`,
        [db.namespace, slug, e, t, record.id, record],
      );
      ok = r.rowCount === 1;
    } catch (error) {
      loaded = undefined;
      throw storeError("write", slug, `commit ${record.id}`, error);
    }
    if (!ok) throw await refused(`commit ${record.id}`);
  }

  const refused = async (what: string): Promise<WorkflowError> => {
    const mine = db.held.get(slug);
    return mine !== undefined ? lockLost(slug, mine.epoch, what) : whyRefused(db, slug, what, undefined);
  };

  async function step<T>(id: string, input: unknown, fn: (attempt: number) => T | Promise<T>): Promise<StepOutcome<T>> {
    const stepId = checkId(id);
    const inputFingerprint = fingerprint(input);
    const log = await load();
    const previous = log.steps.get(stepId);
    const decision = await decide(db, slug, previous, inputFingerprint);
    if (decision.reused) return { reused: true, output: decision.output as T, record: decision.record };
    const started: StepRecord = {
      v: 1,
      kind: "step",
      stepId,
      status: "started",
      attempt: previous !== undefined && previous.status !== "completed" && previous.inputFingerprint === inputFingerprint ? previous.attempt + 1 : 1,
      inputFingerprint,
      startedAt: stamp(),
    };
    // The `started` record is acknowledged before the body runs: its statement is fenced by epoch, so a holder
    // whose lease was taken never starts the work (two runners must not race on side effects). It is committed
    // without waiting for the WAL flush, so it costs a round trip, not a durable commit.
    const refused = await putStep(started, null, false).then(
      () => null,
      (error: unknown) => error,
    );
    if (refused !== null) throw refused;
    log.steps.set(stepId, started);
    let output: T;
    let body: string;
    try {
      // As the fs store: a step that returns nothing stores null (undefined is no JSON value).
      output = ((await fn(started.attempt)) ?? null) as T;
      body = canonicalJson(output);
    } catch (error) {
      const failed: StepRecord = { ...started, status: "failed", finishedAt: stamp(), error: describe(error) };
      await putStep(failed, null, true).then(() => log.steps.set(stepId, failed), () => undefined);
      throw error;
    }
    const outputFingerprint = fingerprint(output);
    const completed: StepRecord = { ...started, status: "completed", outputFingerprint, finishedAt: stamp() };
    await putStep(completed, { fp: outputFingerprint, body }, true);
    log.steps.set(stepId, completed);
    return { reused: false, reason: decision.reason, output, record: completed };
  }

  async function recordCommitIntent(intent: CommitIntent): Promise<CommitRecord> {
    const id = checkId(intent?.id);
    if (intent.stepId !== undefined) checkId(intent.stepId);
    const record: CommitRecord = {
      v: 1,
      kind: "commit",
      id,
      status: "intended",
      message: intent.message,
      files: [...intent.files],
      ...(intent.stepId === undefined ? {} : { stepId: intent.stepId }),
      intendedAt: stamp(),
    };
    await putCommit(record);
    (await load()).commits.set(id, record);
    return record;
  }

  async function markCommitted(id: string, options: { sha?: string } = {}): Promise<CommitRecord> {
    const log = await load();
    const intent = log.commits.get(id);
    if (intent === undefined) {
      throw workflowError("store-postgres", "NOT_FOUND", `no commit intent "${id}" in ${file}.`, { file, field: "id", value: id, hint: "call recordCommitIntent before the commit" });
    }
    const record: CommitRecord = { ...intent, status: "committed", committedAt: stamp(), ...(options.sha === undefined ? {} : { sha: options.sha }) };
    await putCommit(record);
    log.commits.set(id, record);
    return record;
  }

  return {
    file,
    step,
    record: async (id) => (await load()).steps.get(id),
    records: async () => [...(await load()).steps.values()],
    recordCommitIntent,
    markCommitted,
    commits: async () => [...(await load()).commits.values()],
    // The table keeps one row per step already; compaction only drops artifacts no step references, fenced.
    async compact() {
      const log = await load();
      const [e, t] = fenceParams(db, slug);
      try {
        const r = await db.pool.query<{ fenced: string; removed: string }>(
          `WITH f AS (SELECT 1 FROM phasekit_runs r WHERE r.namespace = $1 AND r.slug = $2 AND ${fenceSql("$3", "$4")} FOR UPDATE),
                d AS (DELETE FROM phasekit_artifacts a USING f WHERE a.namespace = $1 AND a.slug = $2
                  AND NOT EXISTS (SELECT 1 FROM phasekit_steps s WHERE s.namespace = $1 AND s.slug = $2 AND s.record->>'outputFingerprint' = a.fingerprint)
                  RETURNING 1)
           SELECT (SELECT count(*) FROM f) AS fenced, (SELECT count(*) FROM d) AS removed`,
          [db.namespace, slug, e, t],
        );
        const row = r.rows[0];
        if (row === undefined || Number(row.fenced) !== 1) throw await refused("compact");
        const n = log.steps.size + log.commits.size;
        return { recordsBefore: n, recordsAfter: n, artifactsRemoved: Number(row.removed) };
      } catch (error) {
        throw storeError("write", slug, "compact", error);
      }
    },
  };
}

async function readAll(db: Db, slug: string): Promise<Loaded> {
  try {
    const s = await db.pool.query<{ record: StepRecord }>("SELECT record FROM phasekit_steps WHERE namespace = $1 AND slug = $2", [db.namespace, slug]);
    const c = await db.pool.query<{ record: CommitRecord }>("SELECT record FROM phasekit_commits WHERE namespace = $1 AND slug = $2", [db.namespace, slug]);
    return { steps: new Map(s.rows.map((r) => [r.record.stepId, r.record])), commits: new Map(c.rows.map((r) => [r.record.id, r.record])) };
  } catch (error) {
    throw storeError("read", slug, "checkpoints", error);
  }
}

type Decision = { reused: true; output: unknown; record: StepRecord } | { reused: false; reason: RerunReason };

async function decide(db: Db, slug: string, previous: StepRecord | undefined, input: string): Promise<Decision> {
  if (previous === undefined) return { reused: false, reason: "no-record" };
  if (previous.status !== "completed") return { reused: false, reason: previous.status };
  if (previous.inputFingerprint !== input) return { reused: false, reason: "input-changed" };
  if (previous.outputFingerprint === undefined) return { reused: false, reason: "artifact-missing" };
  let body: string | undefined;
  try {
    const r = await db.pool.query<{ body: string }>("SELECT body FROM phasekit_artifacts WHERE namespace = $1 AND slug = $2 AND fingerprint = $3", [db.namespace, slug, previous.outputFingerprint]);
    body = r.rows[0]?.body;
  } catch (error) {
    throw storeError("read", slug, `artifact of step ${previous.stepId}`, error);
  }
  if (body === undefined) return { reused: false, reason: "artifact-missing" };
  // Content addressing is checked on read: a row edited by hand is rerun, never trusted.
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { reused: false, reason: "artifact-corrupt" };
  }
  if (fingerprint(value) !== previous.outputFingerprint) return { reused: false, reason: "artifact-corrupt" };
  return { reused: true, output: value, record: previous };
}

// `lint#2` is the key of the second `lint` step of a run (the fs store's rule); '#' is not allowed in an id itself.
const OCCURRENCE = /#[1-9][0-9]{0,8}$/;

function checkId(value: unknown): string {
  const base = typeof value === "string" ? value.replace(OCCURRENCE, "") : value;
  const r = validateStepId(base);
  if (!r.ok) throw r.error;
  return value as string;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
