/**
 * What a holder's checkpoint store knows of its run's steps without asking the database. The run's records (no
 * outputs: those stay in phasekit_artifacts) are loaded once, in the background, from the moment a second step
 * is read on its own (or everything is asked for), so opening and the first reuse never wait for a history of
 * any length, nor share the machine with its load. Until the load is in, a step is read on its own: its record
 * and the output that record names, in one statement. Once it is in, deciding a step
 * costs nothing, and a hit reads its output together with the outputs of the steps recorded after it (a resumed
 * body replays its steps in the order it first ran them), up to READ_AHEAD steps and READ_AHEAD_BYTES: the
 * following hits read nothing. Outputs are content-addressed and checked on use, so one read ahead never goes stale.
 * An output stored as a delta comes with the bases of its chain in the same statement (artifact-reads.ts).
 *
 * Why the two agree: the holder's lease was taken before either read, so from then on only this holder writes the
 * run's steps (every write is fenced by the lease). The index and every point read see the same rows, except the
 * holder's own later writes, which `known` keeps and which always win.
 */
import type { CommitRecord, StepRecord } from "@phasekit/adapters-pi";
import type { StoredCommit } from "@phasekit/adapters-pi/store-kit";
import { query, type Db } from "../db/db.js";
import { storeError } from "../db/errors.js";
import { readOutputs } from "./artifact-reads.js";
import { resolveOutputs, type ArtifactRow, type ResolvedOutput } from "./output-chain.js";
import { runLabel } from "./runs.js";

/** The run's records as the database holds them; commit rows unchecked (the engine's commitsFrom checks them). */
export interface Loaded {
  steps: Map<string, StepRecord>;
  commits: Map<string, StoredCommit>;
}

/** Where a run's checkpoints are, named in errors. */
export function checkpointsLabel(db: Db, slug: string): string {
  return `${runLabel(db, slug)}/checkpoints`;
}

/** The run's commit rows as the engine reads them: each with the row it came from. */
async function commitRows(db: Db, slug: string): Promise<Map<string, StoredCommit>> {
  const c = await query<{ commit_id: string; record: unknown }>(db, "SELECT commit_id, record FROM phasekit_commits WHERE namespace = $1 AND slug = $2", [db.namespace, slug]);
  const file = checkpointsLabel(db, slug);
  return new Map(c.rows.map((r) => [r.commit_id, { data: r.record, file, place: { row: r.commit_id } }]));
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
  commits: Map<string, StoredCommit>;
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
  private readonly ahead = new Map<string, ResolvedOutput>();
  /** Steps read on their own so far: the second starts the index load (see `read`). */
  private reads = 0;

  constructor(
    private readonly db: Db,
    private readonly slug: string,
  ) {}

  /**
   * The step's latest record: this holder's own, the index's (both given at once, not as a promise: a step
   * awaits only what needs the database), or one statement that also fetches its output.
   */
  record(stepId: string): StepRecord | undefined | Promise<StepRecord | undefined> {
    if (this.known.has(stepId) && !this.unsure.has(stepId)) return this.known.get(stepId);
    if (this.loaded !== undefined && !this.unsure.has(stepId)) {
      const record = parse(this.loaded.steps.get(stepId));
      this.known.set(stepId, record);
      return record;
    }
    return this.read(stepId);
  }

  private async read(stepId: string): Promise<StepRecord | undefined> {
    // The index loads once a second step is read on its own: the body is replaying, and the index will spare
    // it the reads of the steps after. Not at open: the load (10,000 records: ~10-20 ms of a server core and
    // the client's parsing) ran beside the first step's read and slowed it 2-10x on a loaded 2-core machine
    // (docs/benchmarks.md, "PostgreSQL store: a durable step"). The replay's second step is read on its own
    // either way: the load takes longer than one read.
    if (++this.reads === 2 && this.loaded === undefined) void this.load().catch(() => undefined);
    const { record, chain } = await readStep(this.db, this.slug, stepId);
    this.unsure.delete(stepId);
    this.known.set(stepId, record);
    const fp = record?.outputFingerprint;
    if (fp !== undefined && chain.length > 0) this.keep([...resolveOutputs(chain, [fp])]);
    return record;
  }

  /**
   * The stored output `fp` of step `stepId` (undefined when none is stored): read already, or read now with the
   * outputs of the steps recorded after it, in one statement.
   */
  async output(stepId: string, fp: string): Promise<ResolvedOutput | undefined> {
    // Kept until the next read replaces them: steps that return the same value (null, say) share one output.
    const kept = this.ahead.get(fp);
    if (kept !== undefined) return kept;
    const got = await readOutputs(this.db, this.slug, [fp, ...this.after(stepId, fp)], READ_AHEAD_BYTES, `artifact of step ${stepId}`);
    this.keep([...got]);
    return got.get(fp);
  }

  /**
   * Whether step `stepId` is known to have no row: it was read (from the index or on its own) and found absent,
   * and this holder has written it since only if its write was acknowledged. False when not known.
   */
  absent(stepId: string): boolean {
    return this.known.has(stepId) && this.known.get(stepId) === undefined && !this.unsure.has(stepId);
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

  /**
   * Every record of the run, in the order the run first recorded its steps (the index's order, then the steps
   * this holder recorded first); waits for the index, and a failed load is tried again.
   */
  async all(): Promise<Loaded> {
    const base = this.loaded ?? (await this.load());
    for (const id of [...this.unsure]) await this.record(id);
    const steps = new Map<string, StepRecord>();
    for (const id of base.order) {
      const r = this.known.has(id) ? this.known.get(id) : parse(base.steps.get(id));
      if (r !== undefined) steps.set(id, r);
    }
    for (const [id, r] of this.known) if (r !== undefined && !steps.has(id)) steps.set(id, r);
    const file = checkpointsLabel(this.db, this.slug);
    const known = [...this.knownCommits].map(([id, data]): [string, StoredCommit] => [id, { data, file, place: { row: id } }]);
    return { steps, commits: new Map([...base.commits, ...known]) };
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
  private keep(outputs: Array<[string, ResolvedOutput]>): void {
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
    // Both statements go out at once: nothing of a load is sent later, when the store may have closed meanwhile
    // (the load starts with a step's read, which a close does not wait for).
    const [s, commits] = await Promise.all([
      query<[string, string]>(db, {
        text: `SELECT step_id, record::text FROM phasekit_steps WHERE namespace = $1 AND slug = $2 ORDER BY ${FIRST_RUN_ORDER}`,
        values: [db.namespace, slug],
        rowMode: "array",
      }),
      commitRows(db, slug),
    ]);
    const order = s.rows.map(([id]) => id);
    return { steps: new Map(s.rows), order, position: new Map(order.map((id, i) => [id, i])), commits };
  } catch (error) {
    throw storeError("read", slug, "checkpoints", error);
  }
}

/** The order a run first recorded its steps in (sql/006), as an ORDER BY of phasekit_steps. */
export const FIRST_RUN_ORDER = "first_started, step_id";

/** Every record of run `slug`, read afresh, in the order the run first recorded its steps. */
export async function readAll(db: Db, slug: string): Promise<Loaded> {
  try {
    const s = await query<{ record: StepRecord }>(db, `SELECT record FROM phasekit_steps WHERE namespace = $1 AND slug = $2 ORDER BY ${FIRST_RUN_ORDER}`, [db.namespace, slug]);
    return { steps: new Map(s.rows.map((r) => [r.record.stepId, r.record])), commits: await commitRows(db, slug) };
  } catch (error) {
    throw storeError("read", slug, "checkpoints", error);
  }
}

/**
 * One step's record and the output it names, with every base of that output's delta chain, in one statement.
 * Each artifact is looked up by its whole key: a LATERAL probe, kept one by OFFSET 0 (a plain LATERAL subquery is
 * flattened into a join, which on tables not analyzed yet was planned as a scan of every artifact of the run,
 * filtered: ~7 ms for 10,000 steps; test/point-read-plans.test.ts).
 */
async function readStep(db: Db, slug: string, stepId: string): Promise<{ record: StepRecord | undefined; chain: ArtifactRow[] }> {
  try {
    const r = await query<{ record: StepRecord | null; chain: Array<[string, string, string | null]> | null }>(db, {
      name: "phasekit_read_step_chained",
      text: `WITH RECURSIVE s AS (SELECT record FROM phasekit_steps WHERE namespace = $1 AND slug = $2 AND step_id = $3),
             c(fp, body, base) AS (
               SELECT a.fingerprint, a.body, a.base FROM s
               CROSS JOIN LATERAL (SELECT a.fingerprint, a.body, a.base FROM phasekit_artifacts a WHERE a.namespace = $1 AND a.slug = $2 AND a.fingerprint = s.record->>'outputFingerprint' OFFSET 0) a
               UNION
               SELECT b.fingerprint, b.body, b.base FROM c
               CROSS JOIN LATERAL (SELECT a.fingerprint, a.body, a.base FROM phasekit_artifacts a WHERE a.namespace = $1 AND a.slug = $2 AND a.fingerprint = c.base OFFSET 0) b)
             SELECT (SELECT record FROM s) AS record, (SELECT json_agg(json_build_array(fp, body, base)) FROM c) AS chain`,
      values: [db.namespace, slug, stepId],
    });
    const row = r.rows[0];
    return { record: row?.record ?? undefined, chain: (row?.chain ?? []).map(([fp, body, base]) => ({ fp, body, base })) };
  } catch (error) {
    throw storeError("read", slug, `step ${stepId}`, error);
  }
}

function parse(text: string | undefined): StepRecord | undefined {
  return text === undefined ? undefined : (JSON.parse(text) as StepRecord);
}
