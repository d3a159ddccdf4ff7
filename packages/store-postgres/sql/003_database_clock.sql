-- phasekit PostgreSQL schema, version 3. Apply the files in order, each once, as the schema owner
-- in one transaction (psql -1 -v ON_ERROR_STOP=1 -f FILE), or call migrate() from @phasekit/store-postgres,
-- which does the same under an advisory lock. Never edit a released file.
-- When the run's metadata was last written, on the database's clock: retention ages runs by it, not by the
-- writer's clock (a machine an hour behind made its runs look an hour older). Rows written before this
-- version keep the writer's time they were stamped with.
ALTER TABLE phasekit_runs ADD COLUMN written_at timestamptz;
UPDATE phasekit_runs SET written_at = updated_at WHERE metadata IS NOT NULL;
INSERT INTO phasekit_schema (version) VALUES (3);
