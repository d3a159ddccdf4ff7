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

-- The DELETEs below read the deleting transaction's snapshot. At READ COMMITTED that is taken when each of them
-- starts, after every step statement that locked the run row committed. At REPEATABLE READ or SERIALIZABLE it is
-- the transaction's, and a step committed since (it held the run row FOR SHARE, which a delete waits for and then
-- overwrites, a lock not being an update) would stay without its run; the key's cascade looked with a fresh
-- snapshot and refused. Refused here too (40001: try again) when any transaction committed since that snapshot:
-- any one at all, since which rows it wrote is not visible.
CREATE FUNCTION phasekit_run_delete_sees_all() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  s pg_snapshot;
  top bigint;
BEGIN
  IF current_setting('transaction_isolation') = 'read committed' THEN RETURN; END IF;
  s := pg_current_snapshot();
  top := pg_current_xact_id()::text::bigint;
  IF top - pg_snapshot_xmax(s)::text::bigint > 100000 OR EXISTS (
      SELECT 1 FROM (SELECT x FROM pg_snapshot_xip(s) x
                     UNION ALL SELECT g::text::xid8 FROM generate_series(pg_snapshot_xmax(s)::text::bigint, top - 1) g) c
       WHERE pg_xact_status(c.x) = 'committed') THEN
    RAISE EXCEPTION 'a phasekit run deleted at % may leave step rows committed since its snapshot', current_setting('transaction_isolation')
      USING ERRCODE = 'serialization_failure', HINT = 'try the delete again, or delete runs at READ COMMITTED';
  END IF;
END $$;

CREATE FUNCTION phasekit_run_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM phasekit_run_delete_sees_all();
  DELETE FROM phasekit_steps WHERE namespace = OLD.namespace AND slug = OLD.slug;
  DELETE FROM phasekit_artifacts WHERE namespace = OLD.namespace AND slug = OLD.slug;
  RETURN NULL;
END $$;
CREATE TRIGGER phasekit_run_deleted AFTER DELETE ON phasekit_runs FOR EACH ROW EXECUTE FUNCTION phasekit_run_deleted();

CREATE FUNCTION phasekit_runs_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM phasekit_run_delete_sees_all();
  DELETE FROM phasekit_steps;
  DELETE FROM phasekit_artifacts;
  RETURN NULL;
END $$;
CREATE TRIGGER phasekit_runs_truncated AFTER TRUNCATE ON phasekit_runs FOR EACH STATEMENT EXECUTE FUNCTION phasekit_runs_truncated();
INSERT INTO phasekit_schema (version) VALUES (10);
