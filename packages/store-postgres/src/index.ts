/** @phasekit/store-postgres: the phasekit PlanStore on PostgreSQL, fenced by epoch across machines. */
export { openPostgresPlanStore, DEFAULT_LEASE_MS } from "./store/plan-store.js";
export type { PostgresPlanStore, PostgresPlanStoreOptions } from "./store/plan-store.js";
export { migrate, MIGRATIONS, MIGRATION_LOCK_KEY } from "./schema/migrations.js";
export type { Migration, MigrationReport } from "./schema/migrations.js";
export { isConnectionError } from "./db/errors.js";
