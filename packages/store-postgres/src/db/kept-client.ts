/**
 * One connection of the store's own pool kept checked out between statements that follow each other closely (a
 * holder's steps in a loop). Through `pool.query` each statement paid the pool's checkout and release: a connect
 * timer, an idle timer, a send deferred to the next tick, the `acquire` and `release` events. On a step miss that
 * was about a tenth of a bare `INSERT; COMMIT` (docs/benchmarks.md, "PostgreSQL store: a durable step").
 *
 * Only the store's own pool (own-pool.ts): a pool given by the caller is theirs to size and to watch, so its
 * connections are taken one statement at a time, through its `query`, as before. One statement at a time runs on
 * the kept connection; one sent while it is busy goes through the pool. The connection goes back to the pool once
 * idle for KEEP_MS, at once when a checkout waits for the full pool (in turn: the pool serves its waiters first
 * come, first served), and at once when the pool is ending (the store's close). It is dropped (destroyed, as
 * `pool.query` does after any failed statement) when a statement on it fails, and when the server ends it while
 * it is kept: its `error` event, with nobody listening, would end the process. Every bound a statement has on the
 * pool it keeps here: the server-side timeouts and the reply bound are the connection's own, and the checkout
 * that keeps a connection waits at most the pool's connect timeout.
 */
import pg, { type Pool, type PoolClient, type QueryArrayConfig, type QueryConfig, type QueryResult, type QueryResultRow } from "pg";

/** How long an idle kept connection stays out of the pool (ms): a step loop sends its next statement sooner. */
export const KEEP_MS = 5;

type Statement = string | QueryConfig | QueryArrayConfig;

export class KeptClient {
  private client: PoolClient | undefined;
  private busy = false;
  private lastUsed = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly ended = (error: Error): void => this.drop(error);

  constructor(private readonly pool: Pool) {}

  /** Runs one statement: on the kept connection when it is free, else through the pool. */
  async query<R extends QueryResultRow>(statement: Statement, values?: unknown[]): Promise<QueryResult<R>> {
    if (this.busy || this.pool.ending) return this.pool.query<R>(statement as string, values);
    // Others wait for a connection of the full pool: they were first, so this statement queues behind them.
    if (this.pool.waitingCount > 0) {
      this.giveBack();
      return this.pool.query<R>(statement as string, values);
    }
    this.busy = true;
    let client: PoolClient;
    try {
      client = this.client ?? (await this.keep());
    } catch (error) {
      this.busy = false;
      throw error;
    }
    try {
      return await send<R>(client, statement, values);
    } catch (error) {
      this.drop(error);
      throw error;
    } finally {
      this.busy = false;
      this.lastUsed = performance.now();
      // Kept while others wait for the full pool, a loop's next statement would always come first: they would
      // wait for the loop to pause, up to their connect timeout.
      if (this.pool.ending || this.pool.waitingCount > 0) this.giveBack();
      else this.watch();
    }
  }

  /** Gives the kept connection back to the pool now, unless a statement runs on it (it goes back when that ends). */
  giveBack(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const client = this.client;
    if (client === undefined || this.busy) return;
    this.client = undefined;
    client.removeListener("error", this.ended);
    client.release();
  }

  private async keep(): Promise<PoolClient> {
    const client = await this.pool.connect();
    client.on("error", this.ended);
    this.client = client;
    return client;
  }

  private drop(error: unknown): void {
    const client = this.client;
    if (client === undefined) return;
    this.client = undefined;
    client.removeListener("error", this.ended);
    client.release(error instanceof Error ? error : new Error(String(error)));
  }

  // One timer per KEEP_MS while the connection is kept, not one per statement.
  private watch(): void {
    if (this.timer !== undefined || this.client === undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.busy || performance.now() - this.lastUsed < KEEP_MS) this.watch();
      else this.giveBack();
    }, KEEP_MS);
    this.timer.unref();
  }
}

type Callback<R extends QueryResultRow> = (error: Error | undefined, result: QueryResult<R>) => void;

/**
 * `client.query(statement, values)`, sent as a `pg.Query` with a callback: given a config object, pg copies its
 * every property descriptor and wraps the call in a promise of its own (2-4% of a step miss, measured side by
 * side). A statement with a `rowMode` goes the ordinary way: its Query reads the mode when it is made.
 */
function send<R extends QueryResultRow>(client: PoolClient, statement: Statement, values: unknown[] | undefined): Promise<QueryResult<R>> {
  if (typeof statement !== "string" && (statement as QueryArrayConfig).rowMode !== undefined) return client.query<R>(statement as QueryConfig, values);
  const q = typeof statement === "string" ? new pg.Query(statement, values) : new pg.Query(statement.text, statement.values ?? values);
  // A named statement is prepared once per connection: the name is what pg looks it up by.
  if (typeof statement !== "string" && statement.name !== undefined) (q as { name?: string }).name = statement.name;
  return new Promise((resolve, reject) => (client.query as unknown as (q: pg.Query, cb: Callback<R>) => void).call(client, q, (error, result) => (error ? reject(error) : resolve(result))));
}
