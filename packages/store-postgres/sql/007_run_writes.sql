-- phasekit PostgreSQL schema, version 7. Apply the files in order, each once, as the schema owner
-- in one transaction (psql -1 -v ON_ERROR_STOP=1 -f FILE), or call migrate() from @phasekit/store-postgres,
-- which does the same under an advisory lock. Never edit a released file.
-- How many times each run's history was written: its step and commit records, journal entries, control
-- requests (filed, cleared, withdrawn) and metadata. A reader watching a run (the inspector's change stream)
-- compares this number instead of reading every step row. Triggers count in the statement that writes, so
-- every writer counts, a hand edit included, and a write and its count commit together.
-- The count has a table of its own, not a column of phasekit_runs: the step and commit statements lock the run
-- row FOR SHARE, and two of them in flight at once (steps run in parallel) that each raised a column of that
-- row would each wait for the other's share lock to upgrade its own: a deadlock. Every statement takes the run
-- row before the count, so the count adds no lock cycle.
-- The runners' role needs SELECT, INSERT, UPDATE, DELETE on phasekit_run_writes too: the triggers run with
-- the rights of the role that writes (an open names a missing grant).
CREATE TABLE phasekit_run_writes (
  namespace text NOT NULL,
  slug text NOT NULL,
  writes bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (namespace, slug),
  FOREIGN KEY (namespace, slug) REFERENCES phasekit_runs ON DELETE CASCADE
);
INSERT INTO phasekit_run_writes (namespace, slug) SELECT namespace, slug FROM phasekit_runs;

CREATE FUNCTION phasekit_run_created() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO phasekit_run_writes (namespace, slug) VALUES (NEW.namespace, NEW.slug) ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;
CREATE TRIGGER phasekit_run_created AFTER INSERT ON phasekit_runs FOR EACH ROW EXECUTE FUNCTION phasekit_run_created();

CREATE FUNCTION phasekit_count_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    UPDATE phasekit_run_writes SET writes = writes + 1 WHERE namespace = OLD.namespace AND slug = OLD.slug;
  ELSE
    UPDATE phasekit_run_writes SET writes = writes + 1 WHERE namespace = NEW.namespace AND slug = NEW.slug;
  END IF;
  RETURN NULL;
END $$;
-- A run deleted (retention) deletes its rows by cascade, inside the foreign key's own trigger (depth 1): its
-- count goes with it, so those deletes are not counted one by one.
CREATE TRIGGER phasekit_count_write AFTER INSERT OR UPDATE ON phasekit_steps FOR EACH ROW EXECUTE FUNCTION phasekit_count_write();
CREATE TRIGGER phasekit_count_delete AFTER DELETE ON phasekit_steps FOR EACH ROW WHEN (pg_trigger_depth() = 0) EXECUTE FUNCTION phasekit_count_write();
CREATE TRIGGER phasekit_count_write AFTER INSERT OR UPDATE ON phasekit_commits FOR EACH ROW EXECUTE FUNCTION phasekit_count_write();
CREATE TRIGGER phasekit_count_delete AFTER DELETE ON phasekit_commits FOR EACH ROW WHEN (pg_trigger_depth() = 0) EXECUTE FUNCTION phasekit_count_write();
CREATE TRIGGER phasekit_count_write AFTER INSERT OR UPDATE ON phasekit_journal FOR EACH ROW EXECUTE FUNCTION phasekit_count_write();
CREATE TRIGGER phasekit_count_delete AFTER DELETE ON phasekit_journal FOR EACH ROW WHEN (pg_trigger_depth() = 0) EXECUTE FUNCTION phasekit_count_write();
CREATE TRIGGER phasekit_count_write AFTER INSERT OR UPDATE ON phasekit_control FOR EACH ROW EXECUTE FUNCTION phasekit_count_write();
CREATE TRIGGER phasekit_count_delete AFTER DELETE ON phasekit_control FOR EACH ROW WHEN (pg_trigger_depth() = 0) EXECUTE FUNCTION phasekit_count_write();
CREATE TRIGGER phasekit_count_write AFTER UPDATE OF metadata ON phasekit_runs FOR EACH ROW EXECUTE FUNCTION phasekit_count_write();
INSERT INTO phasekit_schema (version) VALUES (7);
