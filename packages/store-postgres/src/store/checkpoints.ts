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
  checkCommitRecord,
  checkStepKey,
  commitIntentRecord,
  decideStep,
  fingerprint,
  stepErrorText,
  type CheckpointStore,
  type CommitIntent,
  type CommitRecord,
  type RerunReason,
  type StepOutcome,
  type StepRecord,
} from "@phasekit/adapters-pi";
import { fenceParams, fenceSql, type Db, type Fence } from "../db/db.js";
import { lockLost, storeError } from "../db/errors.js";
import { compactArtifacts } from "./compact.js";
import { runLabel, whyRefused } from "./runs.js";

interface Loaded {
  steps: Map<string, StepRecord>;
  commits: Map<string, CommitRecord>;
}

/**
 * Creates the checkpoint store of run `slug` for the holder of `fence` (its records are read once, on first use).
 * With no lease (`null`) it only reads, afresh on every call, and each write is LOCK_NOT_OWNED before any work.
 */
export function createPgCheckpoints(db: Db, slug: string, fence: Fence, now: () => Date): CheckpointStore {
  const file = `${runLabel(db, slug)}/checkpoints`;
  let loaded: Promise<Loaded> | undefined;
  const load = (): Promise<Loaded> => {
    if (fence === null) return readAll(db, slug);
    return (loaded ??= readAll(db, slug).catch((e: unknown) => ((loaded = undefined), Promise.reject(e))));
  };
  const mustHold = (what: string): void => {
    if (fence === null) throw notHeld(db, slug, file, what);
  };
  const stamp = (): string => now().toISOString();

  // One statement: the record (and, for a completion, its artifact) lands only if the run row still names this
  // holder's epoch. FOR SHARE makes a concurrent takeover wait for this statement, or this statement re-check
  // the row after the takeover committed (and find the epoch changed).
  // A `started` record never replaces the finished record of the same attempt (same startedAt, attempt and
  // input), whatever order statements reach the table in; `fenced` (not the row count) says whether the fence
  // let the statement write.
  async function putStep(record: StepRecord, artifact: { fp: string; body: string } | null, durable: boolean): Promise<void> {
    const [e, t] = fenceParams(fence);
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

  async function putCommit(candidate: CommitRecord): Promise<CommitRecord> {
    // The fs store's schema and check: nothing it would refuse reaches the table.
    const record = checkCommitRecord(candidate, file);
    const [e, t] = fenceParams(fence);
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
    return record;
  }

  const refused = async (what: string): Promise<WorkflowError> => (fence !== null ? lockLost(slug, fence.epoch, what) : whyRefused(db, slug, fence, what, undefined));

  async function step<T>(id: string, input: unknown, fn: (attempt: number) => T | Promise<T>): Promise<StepOutcome<T>> {
    const stepId = checkStepKey(id);
    mustHold(`ctx.step("${stepId}")`);
    const inputFingerprint = fingerprint(input);
    const log = await load();
    const previous = log.steps.get(stepId);
    const decision = decideStep(previous, inputFingerprint);
    let reason: RerunReason;
    if (!decision.verify) reason = decision.reason;
    else {
      const stored = await readOutput(db, slug, stepId, decision.outputFingerprint);
      if (stored.ok) return { reused: true, output: stored.output as T, record: previous as StepRecord };
      reason = stored.reason;
    }
    const started: StepRecord = { v: 1, kind: "step", stepId, status: "started", attempt: decision.attempt, inputFingerprint, startedAt: stamp() };
    // The `started` record is acknowledged before the body runs: its statement is fenced by epoch, so a holder
    // whose lease was taken never starts the work (two runners must not race on side effects). It is committed
    // without waiting for the WAL flush, so it costs a round trip, not a durable commit.
    await putStep(started, null, false);
    log.steps.set(stepId, started);
    let output: T;
    let body: string;
    try {
      // As the fs store: a step that returns nothing stores null (undefined is no JSON value).
      output = ((await fn(started.attempt)) ?? null) as T;
      body = canonicalJson(output);
    } catch (error) {
      const failed: StepRecord = { ...started, status: "failed", finishedAt: stamp(), error: stepErrorText(error) };
      await putStep(failed, null, true).then(() => log.steps.set(stepId, failed), () => undefined);
      throw error;
    }
    const outputFingerprint = fingerprint(output);
    const completed: StepRecord = { ...started, status: "completed", outputFingerprint, finishedAt: stamp() };
    await putStep(completed, { fp: outputFingerprint, body }, true);
    log.steps.set(stepId, completed);
    return { reused: false, reason, output, record: completed };
  }

  async function recordCommitIntent(intent: CommitIntent): Promise<CommitRecord> {
    const record = commitIntentRecord(intent, stamp());
    mustHold(`recording the commit intent "${record.id}"`);
    const stored = await putCommit(record);
    (await load()).commits.set(stored.id, stored);
    return stored;
  }

  async function markCommitted(id: string, options: { sha?: string } = {}): Promise<CommitRecord> {
    mustHold(`marking the commit "${id}" as made`);
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
      mustHold("a compaction");
      const log = await load();
      const removed = await compactArtifacts(db, slug, fence, () => refused("compact"));
      const n = log.steps.size + log.commits.size;
      return { recordsBefore: n, recordsAfter: n, artifactsRemoved: removed };
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

type StoredOutput = { ok: true; output: unknown } | { ok: false; reason: "artifact-missing" | "artifact-corrupt" };

/** The stored output `fp` of a step, checked against its content address (a row edited by hand is rerun). */
async function readOutput(db: Db, slug: string, stepId: string, fp: string): Promise<StoredOutput> {
  let body: string | undefined;
  try {
    const r = await db.pool.query<{ body: string }>("SELECT body FROM phasekit_artifacts WHERE namespace = $1 AND slug = $2 AND fingerprint = $3", [db.namespace, slug, fp]);
    body = r.rows[0]?.body;
  } catch (error) {
    throw storeError("read", slug, `artifact of step ${stepId}`, error);
  }
  if (body === undefined) return { ok: false, reason: "artifact-missing" };
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { ok: false, reason: "artifact-corrupt" };
  }
  return fingerprint(value) === fp ? { ok: true, output: value } : { ok: false, reason: "artifact-corrupt" };
}

function notHeld(db: Db, slug: string, file: string, what: string): WorkflowError {
  return workflowError("store-postgres", "LOCK_NOT_OWNED", `run ${slug}: ${what} writes to ${file}, but these checkpoints were opened without a lease on the run.`, {
    file,
    hint: `take the run's lock first and write through it: (await store.lock("${slug}", …)).lock.store.checkpoints("${slug}", …); reading needs no lock`,
    namespace: db.namespace,
  });
}
