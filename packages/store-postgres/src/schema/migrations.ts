/**
 * Versioned schema migrations: a separate step, run by the schema's owner (`migrate()`, or the SQL files in
 * the package's `sql/` folder applied with any tool), never by an ordinary open. The files are the one record
 * of the schema; `migrate()` applies the missing ones in one transaction under a transaction-scoped advisory
 * lock, so two migrators starting at once apply each version exactly once, and a migrator that dies frees the
 * lock with its connection. Its waits are bounded like every statement of the store (lock_timeout).
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { checkedOut } from "../db/db.js";
import { connectionFailure, isConnectionError, waitBound } from "../db/errors.js";
import { connectionSettings, resolveTimeouts, type PostgresTimeouts } from "../db/settings.js";
import { workflowError } from "@phasekit/core";

/** Key of the advisory lock held while migrating (any fixed 64-bit number; "phasekit" in ASCII). */
export const MIGRATION_LOCK_KEY = "7018134390371232628";

/** The folder of the SQL files (shipped with the package, beside src/ and dist/). */
export const SQL_DIR = fileURLToPath(new URL("../../sql/", import.meta.url));

/** One migration: its version (1, 2, …), its file and the statements that take the schema there. */
export interface Migration {
  version: number;
  file?: string;
  sql: string;
}

/** Every migration, in order, read from the SQL files. Never edit a released one: add the next file. */
export const MIGRATIONS: readonly Migration[] = readdirSync(SQL_DIR)
  .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
  .sort()
  .map((file, i) => {
    const version = Number(file.slice(0, 3));
    if (version !== i + 1) throw new Error(`@phasekit/store-postgres: sql/${file} is out of sequence (expected version ${i + 1}).`);
    return { version, file, sql: readFileSync(SQL_DIR + file, "utf8") };
  });

/** The schema version this package reads and writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** What `migrate` did: the versions it applied (empty when the schema was current). */
export interface MigrationReport {
  applied: number[];
  version: number;
}

/** Options of `migrate` when it is given a connection string. */
export interface MigrateOptions {
  timeouts?: PostgresTimeouts | undefined;
}

/**
 * Brings the schema to the newest version; safe to call from many processes at once. Takes a pool you own or a
 * connection string (a pool is made and ended). A wait past the lock timeout (another migrator stuck holding
 * the lock) is a typed WRITE_FAILED naming it.
 */
export async function migrate(target: pg.Pool | string, migrations: readonly Migration[] = MIGRATIONS, options: MigrateOptions = {}): Promise<MigrationReport> {
  const own = typeof target === "string";
  const pool = own ? new pg.Pool({ connectionString: target, max: 1, ...connectionSettings(resolveTimeouts(options.timeouts, 10_000)) }) : target;
  if (own) pool.on("error", () => undefined);
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    if (own) await pool.end().catch(() => undefined);
    throw connectionFailure(error, "migrate");
  }
  const release = checkedOut(client);
  let broken: unknown;
  try {
    await client.query("BEGIN");
    // Transaction-scoped: released by COMMIT/ROLLBACK or when the connection dies, never leaked.
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK_KEY]);
    await client.query("CREATE TABLE IF NOT EXISTS phasekit_schema (version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())");
    const done = new Set((await client.query<{ version: number }>("SELECT version FROM phasekit_schema")).rows.map((r) => r.version));
    const applied: number[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await client.query(m.sql);
      // The files record their own version; a migration given inline may not.
      await client.query("INSERT INTO phasekit_schema (version) VALUES ($1) ON CONFLICT DO NOTHING", [m.version]);
      applied.push(m.version);
    }
    await client.query("COMMIT");
    return { applied, version: Math.max(0, ...done, ...applied) };
  } catch (error) {
    broken = error;
    await client.query("ROLLBACK").catch(() => undefined);
    if (waitBound(error) === "lock") {
      throw workflowError("store-postgres", "WRITE_FAILED", "migrate: another session held the migration lock or a table past the lock timeout.", {
        field: "migrate",
        timedOut: "lock",
        hint: "another migration is running or stuck: find it in pg_stat_activity (pg_terminate_backend ends it; its transaction rolls back), then migrate again",
      }, error);
    }
    // 42501: a role that may only read and write the tables (the runners') cannot create what a migration does.
    if ((error as { code?: unknown } | null)?.code === "42501") {
      throw workflowError("store-postgres", "INVALID_CONFIG", `migrate: the role this connects as may not change the phasekit schema: ${String((error as Error).message)}.`, {
        field: "connectionString",
        sqlState: "42501",
        hint: "run migrate() as the schema owner (the role that created the phasekit_* tables), or apply the sql/ files in order with psql -1 as that role; the runners need only DML grants",
      }, error);
    }
    throw isConnectionError(error) ? connectionFailure(error, "migrate") : error;
  } finally {
    release(broken);
    if (own) await pool.end().catch(() => undefined);
  }
}
