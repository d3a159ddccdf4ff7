/**
 * What an open checks instead of migrating: the schema is the version this package speaks, and the role may
 * read and write its tables. Needs only DML rights; a schema too old or too new, or a missing grant, is a typed
 * error naming the fix.
 */
import { workflowError } from "@phasekit/core";
import { query, type Db } from "../db/db.js";
import { connectionFailure } from "../db/errors.js";
import { SCHEMA_VERSION } from "./migrations.js";

/** The function the step statements raise a refusal with (sql/009); PostgreSQL lets every role execute it unless revoked. */
const FENCE_FUNCTION = "phasekit_fence_refused(text, text)";

const TABLES = ["phasekit_runs", "phasekit_journal", "phasekit_steps", "phasekit_commits", "phasekit_artifacts", "phasekit_control", "phasekit_run_writes"];

/**
 * The triggers on phasekit_runs that delete a run's steps and artifacts with it (sql/010: those tables have no
 * foreign key to the run row). Without them a deleted run's steps would stay, and a new run of the same id
 * would find them as its own history.
 */
const RUN_DELETED_TRIGGERS = ["phasekit_run_deleted", "phasekit_runs_truncated"];

/** The schema version found (0 when there is none); throws a typed error when the store cannot work on it. */
export async function checkSchema(db: Db): Promise<number> {
  let version: number;
  try {
    const r = await query<{ version: number | null }>(db, "SELECT max(version) AS version FROM phasekit_schema");
    version = r.rows[0]?.version ?? 0;
  } catch (error) {
    // 42P01: no phasekit_schema table, nothing migrated yet.
    if ((error as { code?: unknown })?.code !== "42P01") throw connectionFailure(error, "opening the store");
    version = 0;
  }
  if (version < SCHEMA_VERSION) {
    throw workflowError("store-postgres", "UNSUPPORTED_VERSION", `the database's phasekit schema is version ${version}; this @phasekit/store-postgres needs version ${SCHEMA_VERSION}.`, {
      field: "schema",
      value: version,
      expected: SCHEMA_VERSION,
      hint: "as the schema owner, run migrate(connectionString) from @phasekit/store-postgres (or apply its sql/ files in order), then open again; or pass migrate: true",
    });
  }
  if (version > SCHEMA_VERSION) {
    throw workflowError("store-postgres", "UNSUPPORTED_VERSION", `the database's phasekit schema is version ${version}, newer than the version ${SCHEMA_VERSION} this @phasekit/store-postgres knows.`, {
      field: "schema",
      value: version,
      expected: SCHEMA_VERSION,
      hint: "upgrade @phasekit/store-postgres on this machine to the version that migrated the database",
    });
  }
  let absent: string[];
  let missing: string[];
  let mayRefuse: boolean | null;
  let cascades: string[];
  try {
    // Tables and the function are looked up by oid (to_regclass, to_regprocedure: NULL when not found): by name,
    // has_table_privilege raised 42P01 for a table not on the search_path and has_function_privilege 42883, both
    // read as a database out of reach. One privilege per call: given a list, the answer is true when any is held.
    const r = await query<{ absent: string[]; missing: string[]; may_refuse: boolean | null; cascades: string[] }>(db,
      `SELECT array(SELECT t FROM unnest($1::text[]) t WHERE to_regclass(t) IS NULL) AS absent,
         array(SELECT t FROM unnest($1::text[]) t WHERE to_regclass(t) IS NOT NULL AND NOT (has_table_privilege(to_regclass(t), 'SELECT')
           AND has_table_privilege(to_regclass(t), 'INSERT') AND has_table_privilege(to_regclass(t), 'UPDATE')
           AND has_table_privilege(to_regclass(t), 'DELETE'))) AS missing,
         has_function_privilege(to_regprocedure($2)::oid, 'EXECUTE') AS may_refuse,
         array(SELECT tgname::text FROM pg_trigger WHERE tgrelid = to_regclass('phasekit_runs') AND tgname = ANY($3::text[])
           AND tgenabled IN ('O', 'A')) AS cascades`, [TABLES, FENCE_FUNCTION, RUN_DELETED_TRIGGERS]);
    absent = r.rows[0]?.absent ?? [];
    missing = r.rows[0]?.missing ?? [];
    // NULL: no such function on this role's search_path (by name, has_function_privilege raised 42883, read as
    // a database out of reach).
    mayRefuse = r.rows[0]?.may_refuse ?? null;
    cascades = r.rows[0]?.cascades ?? [];
  } catch (error) {
    throw connectionFailure(error, "opening the store");
  }
  if (absent.length > 0) {
    throw workflowError("store-postgres", "INVALID_CONFIG", `the database's phasekit schema is version ${version}, but its tables ${absent.join(", ")} are not on the search_path of the role this store connects as.`, {
      field: "connectionString",
      value: absent,
      hint: "as the schema owner, find where they went (dropped, or created in another schema) and restore them beside phasekit_schema; or set the role's search_path to their schema",
    });
  }
  if (missing.length > 0) {
    throw workflowError("store-postgres", "INVALID_CONFIG", `the role this store connects as lacks SELECT, INSERT, UPDATE or DELETE on ${missing.join(", ")}.`, {
      field: "connectionString",
      value: missing,
      hint: `GRANT SELECT, INSERT, UPDATE, DELETE ON ${missing.join(", ")} TO <role>`,
    });
  }
  // Every step's durable statement names it (sql/009): without it, or without EXECUTE, every step would fail.
  if (mayRefuse === null) {
    throw workflowError("store-postgres", "INVALID_CONFIG", `the database's phasekit schema is version ${version}, but its function ${FENCE_FUNCTION} is not on the search_path of the role this store connects as.`, {
      field: "connectionString",
      value: FENCE_FUNCTION,
      hint: "as the schema owner, create it where the phasekit_* tables are (apply sql/009_fence_refusal.sql's CREATE FUNCTION with that schema first on the search_path)",
    });
  }
  if (!mayRefuse) {
    throw workflowError("store-postgres", "INVALID_CONFIG", `the role this store connects as may not execute ${FENCE_FUNCTION}.`, {
      field: "connectionString",
      value: FENCE_FUNCTION,
      hint: `GRANT EXECUTE ON FUNCTION ${FENCE_FUNCTION} TO <role>`,
    });
  }
  const without = RUN_DELETED_TRIGGERS.filter((t) => !cascades.includes(t));
  if (without.length > 0) {
    throw workflowError("store-postgres", "INVALID_CONFIG", `the database's phasekit schema is version ${version}, but the trigger${without.length > 1 ? "s" : ""} ${without.join(", ")} on phasekit_runs, which delete a run's steps and artifacts with the run, ${without.length > 1 ? "are" : "is"} missing or disabled.`, {
      field: "connectionString",
      value: without,
      hint: "as the schema owner, create them as sql/010_run_rows_deleted_by_trigger.sql does, or ALTER TABLE phasekit_runs ENABLE TRIGGER <name>; until then a deleted run's steps stay and a new run of the same id would find them",
    });
  }
  return version;
}
