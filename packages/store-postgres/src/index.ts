/** @phasekit/store-postgres: the phasekit PlanStore on PostgreSQL, fenced by epoch across machines. */
export { openPostgresPlanStore, DEFAULT_LEASE_MS } from "./store/plan-store.js";
export type { PostgresPlanStore, PostgresPlanStoreOptions, PostgresLock } from "./store/plan-store.js";
export { migrate, MIGRATIONS, MIGRATION_LOCK_KEY, SCHEMA_VERSION, SQL_DIR } from "./schema/migrations.js";
export type { Migration, MigrationReport, MigrateOptions } from "./schema/migrations.js";
export type { PostgresTimeouts } from "./db/settings.js";
export { isConnectionError } from "./db/errors.js";
