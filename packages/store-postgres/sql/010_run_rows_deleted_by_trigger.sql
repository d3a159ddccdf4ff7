-- phasekit PostgreSQL schema, version 10. Apply the files in order, each once, as the schema owner
-- in one transaction (psql -1 -v ON_ERROR_STOP=1 -f FILE), or call migrate() from @phasekit/store-postgres,
-- which does the same under an advisory lock. Never edit a released file.
-- Step records and artifacts no longer reference their run row by a foreign key. Every statement that writes
-- them already locks that row FOR SHARE in its fence (the run row names the writer's epoch), so the key's own
-- check (a trigger that looks the row up again and locks it FOR KEY SHARE) only repeated it, at ~14 us of server
-- time per row on a step's durable statement, about a twentieth of a bare INSERT; COMMIT (docs/benchmarks.md,
-- "PostgreSQL store: a durable step"). What the keys' ON DELETE CASCADE did, the triggers below do: a run
-- deleted (retention, or by hand with DELETE or TRUNCATE) takes its steps and artifacts with it, in the same
-- statement. The deleting role needs DELETE on both tables, as the runners have. An open checks that both
-- triggers are there and enabled. A step or artifact row written by hand for a run that has no row is no longer
-- refused; the store never writes one (its fence finds no run row and writes nothing).
ALTER TABLE phasekit_steps DROP CONSTRAINT phasekit_steps_namespace_slug_fkey;
ALTER TABLE phasekit_artifacts DROP CONSTRAINT phasekit_artifacts_namespace_slug_fkey;

CREATE FUNCTION phasekit_run_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM phasekit_steps WHERE namespace = OLD.namespace AND slug = OLD.slug;
  DELETE FROM phasekit_artifacts WHERE namespace = OLD.namespace AND slug = OLD.slug;
  RETURN NULL;
END $$;
CREATE TRIGGER phasekit_run_deleted AFTER DELETE ON phasekit_runs FOR EACH ROW EXECUTE FUNCTION phasekit_run_deleted();

CREATE FUNCTION phasekit_runs_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM phasekit_steps;
  DELETE FROM phasekit_artifacts;
  RETURN NULL;
END $$;
CREATE TRIGGER phasekit_runs_truncated AFTER TRUNCATE ON phasekit_runs FOR EACH STATEMENT EXECUTE FUNCTION phasekit_runs_truncated();
INSERT INTO phasekit_schema (version) VALUES (10);
