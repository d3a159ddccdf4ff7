/**
 * The heartbeat's own connection: lease renewals never queue behind the store's pool (a pool busy with large
 * step outputs made renewals late by whole leases). One connection per store carries the renewals of all its
 * leases, batched: renewals asked for while a statement is in flight go out together in the next one.
 */
import pg from "pg";
import { isConnectionError } from "../db/errors.js";

/** What a renewal found: renewed; taken (another epoch or holder owns the row, or the row is gone); busy (the row is locked by another session). */
export type Renewal = "renewed" | "taken" | "busy";

interface Ask {
  slug: string;
  epoch: number;
  token: string;
  ms: number;
  resolve(r: Renewal): void;
  reject(e: unknown): void;
}

// A renewal revives a lease that ran out when nobody took it (same epoch and token): an expiry alone is not a
// loss. SKIP LOCKED: a row locked by another session is reported busy at once instead of stalling the batch;
// `ours` is read without locking, so busy and taken are told apart.
const RENEW = `
WITH v AS (SELECT * FROM unnest($2::text[], $3::bigint[], $4::text[], $5::float8[]) WITH ORDINALITY AS v(slug, epoch, token, ms, n)),
t AS (SELECT r.slug, r.epoch FROM phasekit_runs r JOIN v ON r.slug = v.slug AND r.epoch = v.epoch AND r.holder = v.token
      WHERE r.namespace = $1 FOR UPDATE OF r SKIP LOCKED),
u AS (UPDATE phasekit_runs r SET lease_until = now() + v.ms * interval '1 millisecond' FROM v, t
      WHERE r.namespace = $1 AND r.slug = t.slug AND r.epoch = t.epoch AND v.slug = t.slug AND v.epoch = t.epoch RETURNING r.slug, r.epoch)
SELECT v.n, EXISTS (SELECT 1 FROM u WHERE u.slug = v.slug AND u.epoch = v.epoch) AS renewed,
       EXISTS (SELECT 1 FROM phasekit_runs r WHERE r.namespace = $1 AND r.slug = v.slug AND r.epoch = v.epoch AND r.holder = v.token) AS ours
FROM v ORDER BY v.n`;

const IDLE_MS = 10_000;

/** One store's heartbeat connection (connected on first use, reconnected after any failure). */
export class HeartbeatConnection {
  private client: pg.Client | undefined;
  private queue: Ask[] = [];
  private flushing = false;
  private idle: NodeJS.Timeout | undefined;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly namespace: string,
  ) {}

  /** Renews one lease; rejects with the driver's error when the statement failed (nothing is known then). */
  renew(slug: string, epoch: number, token: string, ms: number): Promise<Renewal> {
    clearTimeout(this.idle);
    return new Promise<Renewal>((resolve, reject) => {
      this.queue.push({ slug, epoch, token, ms, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  /** Closes the connection; later renewals open a new one (a closed store may be used again). */
  close(): void {
    clearTimeout(this.idle);
    const c = this.client;
    this.client = undefined;
    if (c !== undefined) void c.end().catch(() => undefined);
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      // Let the renewals asked for in this turn of the event loop join the batch.
      await Promise.resolve();
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0);
        try {
          const client = await this.connect();
          const r = await client.query<{ n: string; renewed: boolean; ours: boolean }>(RENEW, [
            this.namespace,
            batch.map((a) => a.slug),
            batch.map((a) => a.epoch),
            batch.map((a) => a.token),
            batch.map((a) => a.ms),
          ]);
          for (const row of r.rows) {
            const ask = batch[Number(row.n) - 1];
            ask?.resolve(row.renewed ? "renewed" : row.ours ? "busy" : "taken");
          }
        } catch (error) {
          // A failed or timed-out statement leaves the connection in doubt: the next batch gets a new one.
          this.close();
          for (const ask of batch) ask.reject(error);
        }
      }
    } finally {
      this.flushing = false;
      // Like the pool's idle clients: a connection nobody renews through for a while is closed, so a process
      // whose leases are all released can exit even if it never closes the store.
      this.idle = setTimeout(() => this.close(), IDLE_MS);
      this.idle.unref();
    }
  }

  private async connect(): Promise<pg.Client> {
    if (this.client !== undefined) return this.client;
    const c = new pg.Client(this.config);
    // Unhandled, an "error" event of a connection the server dropped would crash the process.
    c.on("error", (error) => {
      if (this.client === c) this.client = undefined;
      if (!isConnectionError(error)) void c.end().catch(() => undefined);
    });
    await c.connect().catch((error: unknown) => {
      void c.end().catch(() => undefined);
      throw error;
    });
    this.client = c;
    return c;
  }
}
