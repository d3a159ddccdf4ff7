/**
 * What a holder's checkpoint store knows of its run's steps without asking the database. The run's records (no
 * outputs: those stay in phasekit_artifacts) are loaded once, in the background, from the moment the store is
 * opened, so opening and the first reuse never wait for a history of any length. Until the load is in, a step is
 * read on its own: its record and the output that record names, in one statement. Once it is in, deciding a step
 * costs nothing, and a hit reads its output together with the outputs of the steps recorded after it (a resumed
 * body replays its steps in the order it first ran them), up to READ_AHEAD steps and READ_AHEAD_BYTES: the
 * following hits read nothing. Outputs are content-addressed and checked on use, so one read ahead never goes stale.
 *
 * Why the two agree: the holder's lease was taken before either read, so from then on only this holder writes the
 * run's steps (every write is fenced by the lease). The index and every point read see the same rows, except the
 * holder's own later writes, which `known` keeps and which always win.
 */
import type { CommitRecord, StepRecord } from "@phasekit/adapters-pi";
import { query, type Db } from "../db/db.js";
import { storeError } from "../db/errors.js";

/** The run's records as the database holds them. */
export interface Loaded {
  steps: Map<string, StepRecord>;
  commits: Map<string, CommitRecord>;
}

/** How many outputs one read takes ahead of the step that asked, and how many bytes of them at most. */
export const READ_AHEAD = 32;
export const READ_AHEAD_BYTES = 1 << 20;

/**
 * The index as loaded: each step's record as JSON text, parsed when the step is first asked for (parsing 10,000
 * records as they arrived blocked the event loop for milliseconds at a time, delaying the first reuse's reply),
 * and the steps in the order they were started.
 */
interface Index {
  steps: Map<string, string>;
  order: string[];
  position: Map<string, number>;
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
  /** Outputs read ahead (or with a record), by content address: one read's worth at most. */
  private readonly ahead = new Map<string, string>();

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
      const record = parse(this.loaded.steps.get(stepId));
      this.known.set(stepId, record);
      return record;
    }
    const { record, body } = await readStep(this.db, this.slug, stepId);
    this.unsure.delete(stepId);
    this.known.set(stepId, record);
    if (record?.outputFingerprint !== undefined && body !== undefined) this.keep([[record.outputFingerprint, body]]);
    return record;
  }

  /**
   * The stored output `fp` of step `stepId` (undefined when none is stored): read already, or read now with the
   * outputs of the steps recorded after it, in one statement.
   */
  async output(stepId: string, fp: string): Promise<string | undefined> {
    // Kept until the next read replaces them: steps that return the same value (null, say) share one output.
    const kept = this.ahead.get(fp);
    if (kept !== undefined) return kept;
    const wanted = [fp, ...this.after(stepId, fp)];
    let rows: Array<[string, string]>;
    try {
      const r = await query<[string, string]>(this.db, {
        name: "phasekit_read_outputs",
        // The first output always; the others while their running total stays within the byte budget. Each is
        // a subquery on the artifact's whole key (OFFSET 0 keeps it one probe per output): as a join, the
        // planner scanned every artifact of the run until the table was analyzed (2.4 ms for 2,000, not 0.15).
        text: `SELECT fp, body FROM (
                 SELECT fp, body, n, sum(octet_length(body)) OVER (ORDER BY n) AS upto FROM (
                   SELECT u.fp, u.n, (SELECT a.body FROM phasekit_artifacts a WHERE a.namespace = $1 AND a.slug = $2 AND a.fingerprint = u.fp) AS body
                   FROM unnest($3::text[]) WITH ORDINALITY AS u(fp, n) OFFSET 0) s
                 WHERE body IS NOT NULL) t
               WHERE n = 1 OR upto <= $4`,
        values: [this.db.namespace, this.slug, wanted, READ_AHEAD_BYTES],
        rowMode: "array",
      });
      rows = r.rows;
    } catch (error) {
      throw storeError("read", this.slug, `artifact of step ${stepId}`, error);
    }
    this.keep(rows);
    return rows.find(([f]) => f === fp)?.[1];
  }

  /** This holder's acknowledged write of `record`. */
  wrote(record: StepRecord): void {
    this.unsure.delete(record.stepId);
    this.known.set(record.stepId, record);
  }

  /** A write of step `stepId` whose outcome is unknown: it is read again before it is used. */
  lost(stepId: string): void {
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
    for (const [id, text] of base.steps) if (!this.known.has(id)) steps.set(id, parse(text) as StepRecord);
    for (const [id, r] of this.known) if (r !== undefined) steps.set(id, r);
    return { steps, commits: new Map([...base.commits, ...this.knownCommits]) };
  }

  /** The outputs of the completed steps started after `stepId`, in that order (none before the index is in). */
  private after(stepId: string, fp: string): string[] {
    const index = this.loaded;
    const at = index?.position.get(stepId);
    if (index === undefined || at === undefined) return [];
    const out: string[] = [];
    for (let i = at + 1; i <= at + READ_AHEAD && i < index.order.length; i++) {
      const id = index.order[i] as string;
      const r = this.known.has(id) ? this.known.get(id) : parse(index.steps.get(id));
      const next = r?.status === "completed" ? r.outputFingerprint : undefined;
      if (next !== undefined && next !== fp && !out.includes(next)) out.push(next);
    }
    return out;
  }

  /** Keeps `outputs` in place of what an earlier read kept and nobody used (the body went another way). */
  private keep(outputs: Array<[string, string]>): void {
    this.ahead.clear();
    for (const [f, body] of outputs) this.ahead.set(f, body);
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
    const s = await query<[string, string]>(db, {
      text: "SELECT step_id, record::text FROM phasekit_steps WHERE namespace = $1 AND slug = $2 ORDER BY record->>'startedAt', step_id",
      values: [db.namespace, slug],
      rowMode: "array",
    });
    const c = await query<{ record: CommitRecord }>(db, "SELECT record FROM phasekit_commits WHERE namespace = $1 AND slug = $2", [db.namespace, slug]);
    const order = s.rows.map(([id]) => id);
    return { steps: new Map(s.rows), order, position: new Map(order.map((id, i) => [id, i])), commits: new Map(c.rows.map((r) => [r.record.id, r.record])) };
  } catch (error) {
    throw storeError("read", slug, "checkpoints", error);
  }
}

/** Every record of run `slug`, read afresh. */
export async function readAll(db: Db, slug: string): Promise<Loaded> {
  try {
    const s = await query<{ record: StepRecord }>(db, "SELECT record FROM phasekit_steps WHERE namespace = $1 AND slug = $2", [db.namespace, slug]);
    const c = await query<{ record: CommitRecord }>(db, "SELECT record FROM phasekit_commits WHERE namespace = $1 AND slug = $2", [db.namespace, slug]);
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
    const r = await query<{ record: StepRecord; body: string | null }>(db, {
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

function parse(text: string | undefined): StepRecord | undefined {
  return text === undefined ? undefined : (JSON.parse(text) as StepRecord);
}
