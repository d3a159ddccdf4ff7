/**
 * The holder's step writes raise their run's write count (`phasekit_run_writes`, what `runSignature` compares)
 * in a statement of their own, sent after they landed, several writes at once (schema 8). A trigger on
 * `phasekit_steps` did it inside each step statement; it cost the step ~0.1× of a bare `INSERT; COMMIT` even when
 * a WHEN clause kept it from firing (docs/benchmarks.md, "PostgreSQL store: a durable step").
 *
 * What a reader can rely on: the count rises only after the writes it counts are visible (the raise is sent
 * once their statements have answered), and within `COUNT_WINDOW_MS` plus one statement of them while the
 * store is open, whatever became of the caller that sent them (a write given up when its lease was declared lost
 * may still land, fenced by a lease the database still counts live). A raise that fails is added to the next one.
 * A store closing waits for the step writes in flight and sends what is pending, once, before its pool ends, for
 * at most the wait a database in doubt gets (db/in-doubt.ts): no raise is sent after `close()` returned. What
 * fails or is still in flight then is dropped: the closed store's leases stop beating, and their running out
 * changes the signature. A holder that dies before its raise leaves the count behind, and the run's lease
 * running out changes the signature instead.
 */
import { isWorkflowError } from "@phasekit/core";
import { query, type Db } from "../db/db.js";
import { settledWithin } from "../db/in-doubt.js";

/**
 * How long writes are gathered into one raise. The inspector looks every 250 ms (adapters-pi cli/run-watch.ts):
 * 20 ms keeps a step's change within a tenth of that, and makes a loop of steps (~3,000/s) send one raise per
 * ~60 of them.
 */
export const COUNT_WINDOW_MS = 20;

/** The raise's name: prepared once per connection, and told apart from the step writes by tests that count. */
export const RAISE_COUNT = {
  name: "phasekit_raise_write_count",
  // Not waited on for the WAL flush: the count is a reader's hint, and the writes it counts are durable on their own.
  text: `UPDATE phasekit_run_writes SET writes = writes + $3
         WHERE namespace = $1 AND slug = $2 AND set_config('synchronous_commit', 'off', true) IS NOT NULL`,
} as const;

/** The writes of one run not counted yet, and the one raise in flight. */
class RunCount {
  private pending = 0;
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> | undefined;
  private lastSent = -Infinity;

  constructor(
    private readonly db: Db,
    private readonly slug: string,
    private readonly era: () => number,
  ) {}

  /** Nothing pending or in flight, and its last raise is older than the window: forgetting it changes nothing. */
  idle(now: number): boolean {
    return this.pending === 0 && this.timer === undefined && this.sending === undefined && now - this.lastSent >= COUNT_WINDOW_MS;
  }

  wrote(n: number): void {
    this.pending += n;
    this.schedule();
  }

  /** A close returned: what is pending is not sent (a raise in flight is left to settle, never retried). */
  drop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = 0;
  }

  /** Sends what is pending now, after the raise in flight, once (the store is closing): what fails is dropped. */
  async flush(): Promise<void> {
    await this.sending;
    await this.send(true);
    // Beside another flush (two closes at once) that sent the raise first, this one had nothing left to send:
    // it returns once that raise has settled too, not while the count it flushes is still on its way.
    await this.sending;
  }

  private schedule(): void {
    if (this.timer !== undefined || this.sending !== undefined || this.pending === 0) return;
    const wait = Math.max(0, this.lastSent + COUNT_WINDOW_MS - performance.now());
    this.timer = setTimeout(() => void this.send(), wait);
    // A pending raise never keeps the process alive: a store left open is not a reason to stay.
    this.timer.unref();
  }

  private send(last = false): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending === 0) return Promise.resolve();
    const n = this.pending;
    this.pending = 0;
    this.lastSent = performance.now();
    const era = this.era();
    const sent = query(this.db, { ...RAISE_COUNT, values: [this.db.namespace, this.slug, n] }, undefined, false).then(
      () => undefined,
      // Counted with the next raise; the writes themselves landed. Not after a close: no timer outlives it.
      () => void (last || era !== this.era() || (this.pending += n)),
    );
    this.sending = sent.finally(() => {
      this.sending = undefined;
      this.schedule();
    });
    return this.sending;
  }
}

/** The pending counts of one store's runs (one per `Db`: see `writeCountsOf`). */
export class WriteCounts {
  private readonly runs = new Map<string, RunCount>();
  // Step write statements in flight: a close waits for them, or their count would go out after it.
  private writing = 0;
  private drained: { settled: Promise<void>; resolve: () => void } | undefined;
  // Raised by every close as it returns: a write or raise of an earlier era that settles later is not counted
  // (it would be sent after that close returned).
  private era = 0;

  constructor(private readonly db: Db) {}

  /**
   * Sends one fenced holder statement writing run `slug`'s step rows (it resolves true when its fence let it
   * write), known to a close while in flight, and counts it once it landed, or may have: a failure other than a
   * WorkflowError (a cut connection can hide a commit; a count too many only makes a reader look again). The
   * statement is counted, not its caller: a caller that gave it up (its lease declared lost while it was in
   * flight) does not stop a write that lands from being counted, and a write its fence refused, or never sent
   * (the lease given up or aborted before), is not counted: a displaced holder writes nothing, not even the new
   * holder's count.
   */
  async write(slug: string, statement: () => Promise<true | undefined>): Promise<true | undefined> {
    const era = this.era;
    this.writing++;
    try {
      const landed = await statement();
      if (landed === true && era === this.era) this.wrote(slug);
      return landed;
    } catch (error) {
      if (!isWorkflowError(error) && era === this.era) this.wrote(slug);
      throw error;
    } finally {
      if (--this.writing === 0) {
        this.drained?.resolve();
        this.drained = undefined;
      }
    }
  }

  /** `n` writes to run `slug` landed (their statements answered). */
  wrote(slug: string, n = 1): void {
    if (n <= 0) return;
    let run = this.runs.get(slug);
    if (run === undefined) {
      // A long-lived store writes many runs: the idle ones are forgotten before the map grows past a few.
      if (this.runs.size >= 64) {
        const now = performance.now();
        for (const [s, r] of this.runs) if (r.idle(now)) this.runs.delete(s);
      }
      this.runs.set(slug, (run = new RunCount(this.db, slug, () => this.era)));
    }
    run.wrote(n);
  }

  /**
   * Once the step writes in flight have settled, sends every pending count, once (before the store's pool ends),
   * waiting `ms` at most; then forgets what is still pending or in flight (nothing of it is sent after this).
   */
  async flush(ms = Infinity): Promise<void> {
    const sent = (async () => {
      while (this.writing > 0) {
        let resolve!: () => void;
        this.drained ??= { settled: new Promise<void>((r) => (resolve = r)), resolve: () => resolve() };
        await this.drained.settled;
      }
      await Promise.all([...this.runs.values()].map((r) => r.flush()));
    })();
    await settledWithin(sent, ms);
    this.era++;
    for (const r of this.runs.values()) r.drop();
  }
}

const byDb = new WeakMap<Db, WriteCounts>();

/** The store's pending counts: every checkpoints object of the store adds to them, and its close flushes them. */
export function writeCountsOf(db: Db): WriteCounts {
  let counts = byDb.get(db);
  if (counts === undefined) byDb.set(db, (counts = new WriteCounts(db)));
  return counts;
}
