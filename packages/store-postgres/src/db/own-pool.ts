/**
 * The pool a store opens for itself (given a connection string), and its end. Ending a `pg.Pool` waits for every
 * connection: a statement in flight until its reply bound (`replyMs`), an idle connection until the server
 * answers its goodbye, which across a partition comes only when the link heals. A store's close does not wait
 * that long (db/in-doubt.ts): past its bound, the connections still open are cut.
 */
import net from "node:net";
import pg from "pg";
import { settledWithin } from "./in-doubt.js";
import { KeptClient } from "./kept-client.js";

// The kept connection of each of the stores' own pools (kept-client.ts); a pool given by the caller has none.
const keptClients = new WeakMap<pg.Pool, KeptClient>();

/** The kept connection of `pool` when it is a store's own pool. */
export function keptClientOf(pool: pg.Pool): KeptClient | undefined {
  return keptClients.get(pool);
}

/** A pool of the store's own, whose connections can be cut at once. */
export interface OwnPool {
  readonly pool: pg.Pool;
  /** Ends the pool, waiting `ms` at most; then cuts its connections still open (their statements fail). */
  end(ms: number): Promise<void>;
}

export function openOwnPool(config: pg.PoolConfig): OwnPool {
  const sockets = new Set<net.Socket>();
  // Every connection's socket, made here (pg's `stream` option) so that it can be destroyed: pg has no public
  // way to cut a connection that is idle or waiting for a reply.
  const stream = (): net.Socket => {
    const s = new net.Socket();
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
    return s;
  };
  const pool = new pg.Pool({ ...config, stream } as pg.PoolConfig);
  // An idle client whose server went away emits "error" on the pool; unhandled, it would crash the process.
  pool.on("error", () => undefined);
  const kept = new KeptClient(pool);
  keptClients.set(pool, kept);
  return {
    pool,
    async end(ms) {
      const ended = pool.end().catch(() => undefined);
      // After end(): a statement on the kept connection finding the pool ending gives it back as it settles.
      kept.giveBack();
      if (await settledWithin(ended, ms)) return;
      for (const s of sockets) s.destroy();
    },
  };
}
