-- phasekit PostgreSQL schema, version 8. Apply the files in order, each once, as the schema owner
-- in one transaction (psql -1 -v ON_ERROR_STOP=1 -f FILE), or call migrate() from @phasekit/store-postgres,
-- which does the same under an advisory lock. Never edit a released file.
-- A run's write count (sql/007) is no longer raised by a trigger on phasekit_steps. The trigger cost every
-- step statement about a tenth of a bare INSERT; COMMIT, even with a WHEN clause that kept it from firing
-- (docs/benchmarks.md, "PostgreSQL store: a durable step"). The holder that wrote the step records raises the
-- count itself, in a statement of its own sent after they landed, several writes at once. So a reader sees
-- the count change shortly after the write is visible, never before. Deleting a step row is still counted by
-- its trigger, and so are journal entries, commit records, control requests and metadata.
-- A step row written by hand (not through @phasekit/store-postgres) is not counted: a reader watching the run
-- notices it with the run's next counted write, or when the holder changes.
DROP TRIGGER phasekit_count_write ON phasekit_steps;
INSERT INTO phasekit_schema (version) VALUES (8);
