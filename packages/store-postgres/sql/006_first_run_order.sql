-- phasekit PostgreSQL schema, version 6. Apply the files in order, each once, as the schema owner
-- in one transaction (psql -1 -v ON_ERROR_STOP=1 -f FILE), or call migrate() from @phasekit/store-postgres,
-- which does the same under an advisory lock. Never edit a released file.
-- Each step's place in the order its run first recorded it (the file store's order): when its first attempt
-- started, written by the first insert of the row and never changed by a later attempt's upsert. A rerun from a
-- step marks it and every step first recorded after it, and a fork copies the steps before it, in this order
-- (ordered by each step's latest attempt, a step retried later moved after the steps that followed it).
-- Rows written before this version get their latest attempt's start: the best the table knew.
ALTER TABLE phasekit_steps ADD COLUMN first_started text;
UPDATE phasekit_steps SET first_started = record->>'startedAt';
INSERT INTO phasekit_schema (version) VALUES (6);
