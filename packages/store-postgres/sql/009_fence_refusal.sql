-- phasekit PostgreSQL schema, version 9. Apply the files in order, each once, as the schema owner
-- in one transaction (psql -1 -v ON_ERROR_STOP=1 -f FILE), or call migrate() from @phasekit/store-postgres,
-- which does the same under an advisory lock. Never edit a released file.
-- The step's durable statement (the artifact and the completed record) answers with its command tag alone,
-- no row: the row it answered before cost the server and the client about a tenth of a bare INSERT; COMMIT
-- (docs/benchmarks.md, "PostgreSQL store: a durable step"). Its fence (the run row still names the holder's
-- epoch) no longer answers a count of 0 when it refuses: the statement calls this function, which raises
-- SQLSTATE PKF01, so the statement writes nothing and the holder reads the refusal from the error code.
-- Every role may execute it (PostgreSQL grants EXECUTE to PUBLIC): the runners' role needs nothing new.
CREATE FUNCTION phasekit_fence_refused(ns text, run text) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RAISE EXCEPTION USING ERRCODE = 'PKF01',
    MESSAGE = format('phasekit: run %s in namespace %s is not held under this lease; the write was refused', run, ns),
    HINT = 'another holder took the run, or this lease ran out: the writer re-checks its lease';
END $$;
INSERT INTO phasekit_schema (version) VALUES (9);
