-- phasekit PostgreSQL schema, version 2. Apply the files in order, each once, as the schema owner
-- in one transaction (psql -1 -v ON_ERROR_STOP=1 -f FILE), or call migrate() from @phasekit/store-postgres,
-- which does the same under an advisory lock. Never edit a released file.
-- Control requests became part of the PlanStore port: rows hold the port's ControlRequest (the fs request
-- file's shape). Rows filed in version 1's shape ({kind, requestedAt, reason?, by?}) are converted, so a
-- pending request survives the upgrade; the signal inside must agree with the row's kind from now on.
UPDATE phasekit_control SET request = jsonb_build_object(
  'schemaVersion', 1,
  'signal', kind,
  'reason', left(coalesce(request->>'reason', kind || ' requested'), 2000),
  'requestedAt', coalesce(request->>'requestedAt', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
  'requestedBy', jsonb_build_object('pid', 0, 'host', coalesce(request->>'by', 'unknown')))
WHERE NOT (request ? 'schemaVersion');
ALTER TABLE phasekit_control ADD CONSTRAINT phasekit_control_signal CHECK (request->>'signal' = kind);
INSERT INTO phasekit_schema (version) VALUES (2);
