-- phasekit PostgreSQL schema, version 4. Apply the files in order, each once, as the schema owner
-- in one transaction (psql -1 -v ON_ERROR_STOP=1 -f FILE), or call migrate() from @phasekit/store-postgres,
-- which does the same under an advisory lock. Never edit a released file.
-- Approve requests (a person's decision for a run that waits: ctx.waitForApproval, a phase's approve gate) are
-- control requests of their own kind, beside pause and stop.
ALTER TABLE phasekit_control DROP CONSTRAINT phasekit_control_kind_check;
ALTER TABLE phasekit_control ADD CONSTRAINT phasekit_control_kind_check CHECK (kind IN ('pause', 'stop', 'approve'));
INSERT INTO phasekit_schema (version) VALUES (4);
