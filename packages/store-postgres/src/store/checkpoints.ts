/**
 * The checkpoint store of one run on PostgreSQL: the latest record per step and per commit, outputs as
 * content-addressed artifacts. A step miss costs at most two statements: the `started` record, committed without
 * waiting for the WAL flush (like the fs log's unsynced `started` line: losing it only makes the next run say
 * "no-record" instead of "started"), and one durable statement that stores the artifact and the `completed`
 * record together. Both carry the holder's epoch and are refused by the database once it is displaced. While
 * the lease is fresh by the holder's clocks the body starts at once and `started` goes out on the event loop's
 * next turn only if the step has not ended by then (a body that ends within its turn costs the durable statement
 * alone); otherwise `started` is acknowledged first, so a holder that stood still past its lease never starts the
 * work. A hit costs one statement (its output), and deciding it
 * none once the run's step index is loaded (step-index.ts). Outputs are stored as deltas on the output this
 * holder stored before when that pays, with the fs store's codec (output-chain.ts).
 */
import { workflowError, type WorkflowError } from "@phasekit/core";
import { checkpointsOver, commitsFrom, type HistoryPort } from "@phasekit/adapters-pi/store-kit";
import type { CheckpointStore, CommitRecord, StepRecord } from "@phasekit/adapters-pi";
import { fencedWrite, fenceParams, fenceSql, query, stillHolding, type Db, type Fence } from "../db/db.js";
import { FENCE_REFUSED, STEP_WRITES, UNIQUE_VIOLATION, type StepWrite } from "./step-writes.js";
import { storableJson, storableJsonText } from "../db/storable.js";
import { lockLost, storeError } from "../db/errors.js";
import { compactArtifacts } from "./compact.js";
import { whyRefused } from "./runs.js";
import { checkpointsLabel, readAll, StepIndex, type Loaded } from "./step-index.js";
import { spendSteps, supersedeSteps } from "./supersede.js";
import { writeCountsOf } from "./write-count.js";
import { checkOutput } from "./readers.js";
import { OutputChain, type ArtifactRow } from "./output-chain.js";
import { isoStamp } from "./iso-stamp.js";

/** A `started` record to send on the next turn, its statement once sent, and whether its step had no row before. */
interface LaterStart {
  timer: NodeJS.Immediate;
  sent?: Promise<void>;
  absent: boolean;
}

/**
 * Creates the checkpoint store of run `slug` for the holder of `fence`; the run's step index loads in the
 * background once a second step is read on its own (step-index.ts). With no lease (`null`) it only reads, afresh on every call, and each write is
 * LOCK_NOT_OWNED before any work.
 */
export function createPgCheckpoints(db: Db, slug: string, fence: Fence, now: () => Date): CheckpointStore {
  const file = checkpointsLabel(db, slug);
  const index = fence === null ? null : new StepIndex(db, slug);
  const all = (): Promise<Loaded> => (index === null ? readAll(db, slug) : index.all());
  const mustHold = (what: string): StepIndex => {
    if (index === null) throw notHeld(db, slug, file, what);
    return index;
  };
  // toISOString's text, without its C++ formatting on each of a miss's two stamps (iso-stamp.ts).
  const stamp = (): string => isoStamp(now());
  const chain = new OutputChain();
  // Step rows are counted for readers by the holder, after they land (write-count.ts), not by the schema.
  const counts = writeCountsOf(db);
  // Delta writes not settled yet: a compaction waits for them, or it could delete a base before their row lands.
  const deltas = new Set<Promise<unknown>>();
  // `started` records of steps begun on a fresh lease (see `start`): each is sent on the next turn of the event
  // loop unless its step has ended by then, and its step's end waits for it.
  const starts = new WeakMap<StepRecord, LaterStart>();
  /** The step's `started` statement in flight (settled, never rejecting), or none: an unsent one is not sent. */
  const takeStart = (started: StepRecord): Promise<void> | undefined => {
    const later = starts.get(started);
    if (later === undefined) return undefined;
    starts.delete(started);
    clearImmediate(later.timer);
    return later.sent;
  };

  // One statement (step-writes.ts): the record (and, for a completion, its artifact) lands only if the run row
  // still names this holder's epoch. Resolves whether the artifact row was written by this statement (false
  // when absent or already there). `repair`: the row there (the same fingerprint, content that failed its check)
  // is replaced by this whole value; without it, a rerun of a step whose stored output was edited would keep the
  // edited row and rerun on every resume.
  async function putStep(record: StepRecord, artifact: ArtifactRow | null, write: StepWrite): Promise<boolean> {
    const [e, t] = fenceParams(fence);
    let ok: boolean;
    let inserted = false;
    try {
      const base = [db.namespace, slug, e, t, record.stepId, storableJsonText(record)];
      const values = artifact === null ? base : [...base, artifact.fp, artifact.body, artifact.base];
      let { name, text } = write;
      // A named (prepared) statement: each connection parses and plans it once, not on every step. An upsert of
      // one row, fenced: sent again on a fresh connection if its own was cut under it. With an artifact, no row
      // answers: the command tag counts the artifact row written, and a refusing fence raises FENCE_REFUSED.
      const put = async (): Promise<true | undefined> => {
        if (artifact === null) return Number((await query<{ fenced: string }>(db, { name, text, values })).rows[0]?.fenced) === 1 ? true : undefined;
        for (;;) {
          try {
            inserted = (await query(db, { name, text, values })).rowCount === 1;
            return true;
          } catch (error) {
            const code = (error as { code?: unknown } | null)?.code;
            if (code === FENCE_REFUSED) return undefined;
            // A row after all (written by hand): nothing of the plain INSERT landed; the upsert replaces the row.
            if (code !== UNIQUE_VIOLATION || name !== STEP_WRITES.completedFresh.name) throw error;
            ({ name, text } = STEP_WRITES.completed);
          }
        }
      };
      // Each statement is counted for readers once it landed, or may have, even if this caller gave it up (write-count.ts).
      ok = (await fencedWrite(fence, () => counts.write(slug, put))) === true;
    } catch (error) {
      // The statement may have committed before the connection went: the next use re-reads the row.
      index?.lost(record.stepId);
      throw storeError("write", slug, `step ${record.stepId} (${record.status})`, error);
    }
    if (!ok) throw await refused(`step ${record.stepId} (${record.status})`);
    return inserted;
  }

  // The engine checked the record (the fs store's schema): nothing it would refuse reaches the table.
  async function putCommit(candidate: CommitRecord): Promise<CommitRecord> {
    const record = storableJson(candidate);
    const [e, t] = fenceParams(fence);
    let ok: boolean;
    try {
      const stored = storableJson(record);
      const put = async (): Promise<true | undefined> => {
        const r = await query(
          db,
          `WITH f AS (SELECT r.epoch FROM phasekit_runs r WHERE r.namespace = $1 AND r.slug = $2 AND ${fenceSql("$3", "$4")} FOR SHARE)
           INSERT INTO phasekit_commits (namespace, slug, commit_id, record, epoch) SELECT $1, $2, $5, $6, f.epoch FROM f
           ON CONFLICT (namespace, slug, commit_id) DO UPDATE SET record = EXCLUDED.record, epoch = EXCLUDED.epoch RETURNING 1`,
          [db.namespace, slug, e, t, record.id, stored],
        );
        return r.rowCount === 1 ? true : undefined;
      };
      ok = (await fencedWrite(fence, put)) === true;
    } catch (error) {
      index?.lostCommits();
      throw storeError("write", slug, `commit ${record.id}`, error);
    }
    if (!ok) throw await refused(`commit ${record.id}`);
    return record;
  }

  const refused = async (what: string): Promise<WorkflowError> => (fence !== null ? lockLost(slug, fence.epoch, what) : whyRefused(db, slug, fence, what, undefined));

  // PostgreSQL's side of the engine's history port (adapters-pi engine/history-port.ts): the step flow, commit
  // intents and rerun marks are the engine's (checkpointsOver); this only reads and writes rows.
  const port: HistoryPort<StepRecord, StepRecord> = {
    file,
    run: slug,
    now,
    mayWrite: (what) => void mustHold(what),
    latest: (key) => (index === null ? readAll(db, slug).then((l) => l.steps.get(key)) : index.record(key)),
    async stored(record, outputFingerprint) {
      const read = await (index as StepIndex).output(record.stepId, outputFingerprint);
      const stored = read === undefined || read.ok ? checkOutput(read?.text, outputFingerprint) : read;
      return stored.ok ? { ok: true, output: stored.output } : { ok: false, reason: stored.reason };
    },
    async start({ key, attempt, inputFingerprint }) {
      const started: StepRecord = { v: 1, kind: "step", stepId: key, status: "started", attempt, inputFingerprint, startedAt: stamp() };
      // Committed without waiting for the WAL flush: a round trip, not a durable commit. While the lease is fresh
      // by the holder's own clocks (a renewal that landed was sent less than a lease ago, on the monotonic and the
      // wall clock), the database cannot count it expired, so nobody can have taken the run: the body starts at
      // once, and the record goes out on the event loop's next turn unless the step has ended by then (its end
      // carries the same attempt). Otherwise the record is acknowledged first: its statement is fenced by epoch,
      // so a holder whose lease was taken never starts the work.
      if (fence?.lease?.fresh() === true) {
        const absent = index?.absent(key) === true;
        index?.wrote(started);
        const later: LaterStart = { absent, timer: setImmediate(() => (later.sent = putStep(started, null, STEP_WRITES.started).then(() => undefined, () => undefined))) };
        starts.set(started, later);
        return started;
      }
      await putStep(started, null, STEP_WRITES.started);
      index?.wrote(started);
      return started;
    },
    beforeBody(started) {
      // The fs log's fence before fn, here: a holder that stood still past its lease since `started` landed (the
      // run taken meanwhile) must not start the work. Costs nothing while the heartbeat keeps the lease fresh.
      if (fence?.lease === undefined || fence.lease.fresh()) return undefined;
      return stillHolding(fence.lease, () => refused(`step ${started.stepId} (started)`));
    },
    async fail(started, error) {
      const failed: StepRecord = { ...started, status: "failed", finishedAt: stamp(), error };
      // Beside a `started` still in flight, if any: the statement's guard keeps a late `started` from replacing it.
      const sent = takeStart(started);
      await putStep(failed, null, STEP_WRITES.record);
      await sent;
      index?.wrote(failed);
    },
    async complete(started, { text, value, fingerprint: outputFingerprint, repair }) {
      const completed: StepRecord = { ...started, status: "completed", outputFingerprint, finishedAt: stamp() };
      // A rerun because the stored output failed its check stores it whole, in place of the row there: a delta
      // could name a base whose own chain passes through that row.
      const written = chain.row(outputFingerprint, text, value, repair);
      // No row before and no `started` sent: the record goes in with a plain INSERT (step-writes.ts, `fresh`).
      const later = starts.get(started);
      const fresh = later !== undefined && later.absent && later.sent === undefined;
      const sent = takeStart(started);
      const put = putStep(completed, written.row, repair ? STEP_WRITES.repair : fresh ? STEP_WRITES.completedFresh : STEP_WRITES.completed);
      if (written.row.base !== null) {
        const settled: Promise<unknown> = put.then(
          (): boolean => deltas.delete(settled),
          (): boolean => deltas.delete(settled),
        );
        deltas.add(settled);
      }
      const stored = await put;
      await sent;
      if (stored) chain.stored(written);
      index?.wrote(completed);
      return completed;
    },
    view: (record) => record,
    records: async () => [...(await all()).steps.values()],
    commits: async () => commitsFrom((await all()).commits.values()),
    async putCommit(record) {
      const stored = await putCommit(record);
      index?.wroteCommit(stored);
      return stored;
    },
    // rerunFrom's mark (supersede.ts) on the keys the engine chose (the order the run first recorded its steps
    // in, the file store's: sql/006; the step index loads them in it).
    async mark({ from, keys }) {
      for (const k of keys) index?.lost(k);
      if (!(await supersedeSteps(db, slug, fence, keys))) throw await refused(`rerun from ${from}`);
    },
    // The run ended without reaching these flagged steps: their marks are spent (supersede.ts).
    async spend({ keys }) {
      for (const k of keys) index?.lost(k);
      if (!(await spendSteps(db, slug, fence, keys))) throw await refused(`spending the rerun of ${keys.length} step(s)`);
    },
    // The table keeps one row per step already; compaction only drops artifacts no step references, fenced.
    async compact() {
      const held = mustHold("a compaction");
      // Compaction keeps every base a kept output's chain needs, but this holder's last output may have been
      // left unreferenced (its step written again since), and a delta on it may still be on its way: no new
      // delta while it runs, and it starts once the deltas made before it have landed (output-chain.ts).
      chain.beginCompaction();
      try {
        const log = await held.all();
        await Promise.all([...deltas]);
        const removed = await compactArtifacts(db, slug, fence, () => refused("compact"));
        const n = log.steps.size + log.commits.size;
        return { recordsBefore: n, recordsAfter: n, artifactsRemoved: removed };
      } finally {
        chain.endCompaction();
      }
    },
  };
  return checkpointsOver(port);
}

function notHeld(db: Db, slug: string, file: string, what: string): WorkflowError {
  return workflowError("store-postgres", "LOCK_NOT_OWNED", `run ${slug}: ${what} writes to ${file}, but these checkpoints were opened without a lease on the run.`, {
    file,
    hint: `take the run's lock first and write through it: (await store.lock("${slug}", …)).lock.store.checkpoints("${slug}", …); reading needs no lock`,
    namespace: db.namespace,
  });
}
