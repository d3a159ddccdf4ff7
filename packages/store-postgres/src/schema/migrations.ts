/**
 * Versioned schema migrations, applied by the store when it starts. Every process that starts takes one
 * transaction-scoped advisory lock first, so two processes starting at once apply each version exactly once:
 * the second waits, then finds the version recorded and skips it.
 */
import type { Pool } from "pg";

/** Key of the advisory lock held while migrating (any fixed 64-bit number; "phasekit" in ASCII). */
export const MIGRATION_LOCK_KEY = "7018134390371232628";

/** One migration: its version (1, 2, …) and the statements that take the schema there. */
export interface Migration {
  version: number;
  sql: string;
}

/** Every migration, in order. Never edit a released one: add the next version. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `
CREATE TABLE phasekit_runs (
  namespace text NOT NULL,
  slug text NOT NULL,
  generation bigint,
  metadata jsonb,
  status text,
  updated_at timestamptz,
  epoch bigint NOT NULL DEFAULT 0,
  holder text,
  holder_owner jsonb,
  lease_until timestamptz,
  journal_seq bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (namespace, slug)
);
CREATE TABLE phasekit_journal (
  namespace text NOT NULL,
  slug text NOT NULL,
  seq bigint NOT NULL,
  entry jsonb NOT NULL,
  epoch bigint,
  PRIMARY KEY (namespace, slug, seq),
  FOREIGN KEY (namespace, slug) REFERENCES phasekit_runs ON DELETE CASCADE
);
CREATE TABLE phasekit_steps (
  namespace text NOT NULL,
  slug text NOT NULL,
  step_id text NOT NULL,
  record jsonb NOT NULL,
  epoch bigint NOT NULL,
  PRIMARY KEY (namespace, slug, step_id),
  FOREIGN KEY (namespace, slug) REFERENCES phasekit_runs ON DELETE CASCADE
);
CREATE TABLE phasekit_commits (
  namespace text NOT NULL,
  slug text NOT NULL,
  commit_id text NOT NULL,
  record jsonb NOT NULL,
  epoch bigint NOT NULL,
  PRIMARY KEY (namespace, slug, commit_id),
  FOREIGN KEY (namespace, slug) REFERENCES phasekit_runs ON DELETE CASCADE
);
CREATE TABLE phasekit_artifacts (
  namespace text NOT NULL,
  slug text NOT NULL,
  fingerprint text NOT NULL,
  body text NOT NULL,
  PRIMARY KEY (namespace, slug, fingerprint),
  FOREIGN KEY (namespace, slug) REFERENCES phasekit_runs ON DELETE CASCADE
);
CREATE TABLE phasekit_control (
  namespace text NOT NULL,
  slug text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('pause', 'stop')),
  request jsonb NOT NULL,
  PRIMARY KEY (namespace, slug, kind),
  FOREIGN KEY (namespace, slug) REFERENCES phasekit_runs ON DELETE CASCADE
);`,
  },
  {
    // Control requests became part of the PlanStore port: rows hold the port's ControlRequest (the fs request
    // file's shape). Rows filed in version 1's shape ({kind, requestedAt, reason?, by?}) are converted, so a
    // pending request survives the upgrade; the signal inside must agree with the row's kind from now on.
    version: 2,
    sql: `
UPDATE phasekit_control SET request = jsonb_build_object(
  'schemaVersion', 1,
  'signal', kind,
  'reason', left(coalesce(request->>'reason', kind || ' requested'), 2000),
  'requestedAt', coalesce(request->>'requestedAt', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
  'requestedBy', jsonb_build_object('pid', 0, 'host', coalesce(request->>'by', 'unknown')))
WHERE NOT (request ? 'schemaVersion');
ALTER TABLE phasekit_control ADD CONSTRAINT phasekit_control_signal CHECK (request->>'signal' = kind);`,
  },
];

/** What `migrate` did: the versions it applied (empty when the schema was current). */
export interface MigrationReport {
  applied: number[];
  version: number;
}

/** Brings the schema to the newest version; safe to call from many processes at once. */
export async function migrate(pool: Pool, migrations: readonly Migration[] = MIGRATIONS): Promise<MigrationReport> {
  const client = await pool.connect();
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
      await client.query("INSERT INTO phasekit_schema (version) VALUES ($1)", [m.version]);
      applied.push(m.version);
    }
    await client.query("COMMIT");
    return { applied, version: Math.max(0, ...done, ...applied) };
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
