-- phasekit PostgreSQL schema, version 1. Apply the files in order, each once, as the schema owner
-- in one transaction (psql -1 -v ON_ERROR_STOP=1 -f FILE), or call migrate() from @phasekit/store-postgres,
-- which does the same under an advisory lock. Never edit a released file.
CREATE TABLE IF NOT EXISTS phasekit_schema (version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
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
);
INSERT INTO phasekit_schema (version) VALUES (1);
