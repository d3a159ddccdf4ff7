-- phasekit PostgreSQL schema, version 5. Apply the files in order, each once, as the schema owner
-- in one transaction (psql -1 -v ON_ERROR_STOP=1 -f FILE), or call migrate() from @phasekit/store-postgres,
-- which does the same under an advisory lock. Never edit a released file.
-- Step outputs stored as deltas (docs/decisions.md D16, the fs store's codec): an artifact whose `base` is set
-- holds in `body` the canonical JSON of the delta operations that turn the artifact `base` names (same run)
-- into this output; the output is still checked whole against its fingerprint. Rows written before this
-- version have no base: whole values, read as before.
ALTER TABLE phasekit_artifacts ADD COLUMN base text;
INSERT INTO phasekit_schema (version) VALUES (5);
