/**
 * What a holder's checkpoint store knows of its run's steps without asking the database. The run's records (no
 * outputs: those stay in phasekit_artifacts) are loaded once, in the background, from the moment the store is
 * opened, so opening and the first reuse never wait for a history of any length. Until the load is in, a step is
 * read on its own: its record and the output that record names, in one statement. Once it is in, deciding a step
 * costs nothing and a hit reads its output in one statement.
 *
 * Why the two agree: the holder's lease was taken before either read, so from then on only this holder writes the
 * run's steps (every write is fenced by the lease). The index and every point read see the same rows, except the
 * holder's own later writes, which `known` keeps and which always win.
 */
import type { CommitRecord, StepRecord } from "@phasekit/adapters-pi";
import type { Db } from "../db/db.js";
import { storeError } from "../db/errors.js";

/** The run's records as the database holds them. */
export interface Loaded {
  steps: Map<string, StepRecord>;
  commits: Map<string, CommitRecord>;
}

/**
 * The index as loaded: each step's record as JSON text, parsed when the step is first asked for. Parsing 10,000
 * records as they arrive blocked the event loop for milliseconds at a time, delaying the first reuse's reply.
 */
interface Index {
  steps: Map<string, string>;
  commits: Map<string, CommitRecord>;
}

/** The index of one holder's checkpoint store (see the file comment). */
export class StepIndex {
  private loaded: Index | undefined;
  private loading: Promise<Index> | undefined;
  /** Records written by this holder, or read on their own, since the store opened: newer than any index. */
  private readonly known = new Map<string, StepRecord | undefined>();
  private readonly knownCommits = new Map<string, CommitRecord>();
  /** Steps whose last write may or may not have committed (the connection went): read again before use. */
  private readonly unsure = new Set<string>();
  /** The output a point read fetched with a record, kept (one at most) for the step() that follows record(). */
  private fetched: { stepId: string; fingerprint: string; body: string | undefined } | undefined;

  constructor(
    private readonly db: Db,
    private readonly slug: string,
  ) {
    void this.load().catch(() => undefined);
  }

  /** The step's latest record: this holder's own, the index's, or one statement that also fetches its output. */
  async record(stepId: string): Promise<StepRecord | undefined> {
    if (this.known.has(stepId) && !this.unsure.has(stepId)) return this.known.get(stepId);
    if (this.loaded !== undefined && !this.unsure.has(stepId)) {
      const text = this.loaded.steps.get(stepId);
      const record = text === undefined ? undefined : (JSON.parse(text) as StepRecord);
      this.known.set(stepId, record);
      return record;
    }
    const { record, body } = await readStep(this.db, this.slug, stepId);
    this.unsure.delete(stepId);
    this.known.set(stepId, record);
    const fp = record?.outputFingerprint;
    this.fetched = fp === undefined ? undefined : { stepId, fingerprint: fp, body };
    return record;
  }

  /** The stored output `fp` of a step (undefined when none is stored): the one fetched with its record, or one statement. */
  async output(stepId: string, fp: string): Promise<string | undefined> {
    const f = this.fetched;
    this.fetched = undefined;
    if (f !== undefined && f.stepId === stepId && f.fingerprint === fp) return f.body;
    try {
      const r = await this.db.pool.query<{ body: string }>({
        name: "phasekit_read_output",
        text: "SELECT body FROM phasekit_artifacts WHERE namespace = $1 AND slug = $2 AND fingerprint = $3",
        values: [this.db.namespace, this.slug, fp],
      });
      return r.rows[0]?.body;
    } catch (error) {
      throw storeError("read", this.slug, `artifact of step ${stepId}`, error);
    }
  }

  /** This holder's acknowledged write of `record`. */
  wrote(record: StepRecord): void {
    if (this.fetched?.stepId === record.stepId) this.fetched = undefined;
    this.unsure.delete(record.stepId);
    this.known.set(record.stepId, record);
  }

  /** A write of step `stepId` whose outcome is unknown: it is read again before it is used. */
  lost(stepId: string): void {
    if (this.fetched?.stepId === stepId) this.fetched = undefined;
    this.unsure.add(stepId);
  }

  wroteCommit(record: CommitRecord): void {
    this.knownCommits.set(record.id, record);
  }

  /** A commit write whose outcome is unknown: everything is read again on next use. */
  lostCommits(): void {
    this.knownCommits.clear();
    this.loaded = undefined;
    this.loading = undefined;
  }

  /** Every record of the run (waits for the index; a failed load is tried again). */
  async all(): Promise<Loaded> {
    const base = this.loaded ?? (await this.load());
    for (const id of [...this.unsure]) await this.record(id);
    const steps = new Map<string, StepRecord>();
    for (const [id, text] of base.steps) if (!this.known.has(id)) steps.set(id, JSON.parse(text) as StepRecord);
    for (const [id, r] of this.known) if (r !== undefined) steps.set(id, r);
    return { steps, commits: new Map([...base.commits, ...this.knownCommits]) };
  }

  private load(): Promise<Index> {
    const p = (this.loading ??= loadIndex(this.db, this.slug));
    p.then(
      (l) => void (this.loading === p && (this.loaded = l)),
      () => void (this.loading === p && (this.loading = undefined)),
    );
    return p;
  }
}

async function loadIndex(db: Db, slug: string): Promise<Index> {
  try {
    // record::text: the driver hands over strings instead of parsing every record (jsonb) as rows arrive.
    const s = await db.pool.query<[string, string]>({ text: "SELECT step_id, record::text FROM phasekit_steps WHERE namespace = $1 AND slug = $2", values: [db.namespace, slug], rowMode: "array" });
    const c = await db.pool.query<{ record: CommitRecord }>("SELECT record FROM phasekit_commits WHERE namespace = $1 AND slug = $2", [db.namespace, slug]);
    return { steps: new Map(s.rows), commits: new Map(c.rows.map((r) => [r.record.id, r.record])) };
  } catch (error) {
    throw storeError("read", slug, "checkpoints", error);
  }
}

/** Every record of run `slug`, read afresh. */
export async function readAll(db: Db, slug: string): Promise<Loaded> {
  try {
    const s = await db.pool.query<{ record: StepRecord }>("SELECT record FROM phasekit_steps WHERE namespace = $1 AND slug = $2", [db.namespace, slug]);
    const c = await db.pool.query<{ record: CommitRecord }>("SELECT record FROM phasekit_commits WHERE namespace = $1 AND slug = $2", [db.namespace, slug]);
    return { steps: new Map(s.rows.map((r) => [r.record.stepId, r.record])), commits: new Map(c.rows.map((r) => [r.record.id, r.record])) };
  } catch (error) {
    throw storeError("read", slug, "checkpoints", error);
  }
}

/**
 * One step's record and the output it names, in one statement. The artifact is looked up by its whole key in a
 * subquery, so the plan is two primary-key probes whatever the planner's statistics say (a join was planned as
 * a scan of the run's artifacts before the table was analyzed).
 */
async function readStep(db: Db, slug: string, stepId: string): Promise<{ record: StepRecord | undefined; body: string | undefined }> {
  try {
    const r = await db.pool.query<{ record: StepRecord; body: string | null }>({
      name: "phasekit_read_step",
      text: `SELECT s.record, (SELECT a.body FROM phasekit_artifacts a
                WHERE a.namespace = s.namespace AND a.slug = s.slug AND a.fingerprint = s.record->>'outputFingerprint') AS body
             FROM phasekit_steps s WHERE s.namespace = $1 AND s.slug = $2 AND s.step_id = $3`,
      values: [db.namespace, slug, stepId],
    });
    const row = r.rows[0];
    return { record: row?.record, body: row?.body ?? undefined };
  } catch (error) {
    throw storeError("read", slug, `step ${stepId}`, error);
  }
}
