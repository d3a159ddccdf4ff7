/**
 * Schema 9 at its edges: an open when the fence's refusal function is not on the role's search_path, and
 * migrate() from 8 to 9 under a role that may only read and write the tables.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { migrate, MIGRATIONS, openPostgresPlanStore } from "../src/index.js";
import { startCluster } from "./helpers/cluster.js";
import { failure } from "./helpers/failure.js";
import { storeSetup } from "./helpers/stores.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`postgres schema 9 edges (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const { admin } = storeSetup(cluster);
  const freshDb = async (): Promise<{ db: string; url: (user: string) => string }> => {
    const db = `s9_${randomUUID().replaceAll("-", "")}`;
    await admin.query(`CREATE DATABASE ${db}`);
    return { db, url: (user) => `postgres://${user}@127.0.0.1:${cluster.port}/${db}` };
  };

  describe("postgres: schema 9 at its edges", () => {
    it("migrate() from 8 to 9 as a role with only DML rights: a typed error naming the owner", async () => {
      const { url } = await freshDb();
      await migrate(url("phasekit"), MIGRATIONS.filter((m) => m.version <= 8));
      const role = `dml_${randomUUID().slice(0, 8)}`;
      const owner = new pg.Pool({ connectionString: url("phasekit"), max: 1 });
      await owner.query(`CREATE ROLE ${role} LOGIN`);
      await owner.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`);
      await owner.end();
      const e = await failure(migrate(url(role)));
      // Was the driver's raw error (permission denied for schema public), no code of ours, no fix.
      expect(e).toMatchObject({ name: "WorkflowError", code: "INVALID_CONFIG", details: { sqlState: "42501" } });
      expect(String(e?.details?.hint)).toMatch(/as the schema owner/);
      // Nothing of migration 9 landed: the owner still finds version 8.
      const check = new pg.Pool({ connectionString: url("phasekit"), max: 1 });
      expect((await check.query("SELECT max(version) AS v FROM phasekit_schema")).rows[0]?.v).toBe(8);
      await check.end();
    });

    it("the refusal function outside the runner's search_path: a typed error naming it, not an unreachable database", async () => {
      const { url } = await freshDb();
      const role = `sp_${randomUUID().slice(0, 8)}`;
      const owner = new pg.Pool({ connectionString: url("phasekit"), max: 1 });
      // The tables in public; sql/009 (and the later files) applied by hand (psql) by an owner whose search_path
      // puts a schema of its own first: the function lands there, the version rows in public's phasekit_schema.
      await migrate(url("phasekit"), MIGRATIONS.filter((m) => m.version <= 8));
      await owner.query("CREATE SCHEMA phasekit AUTHORIZATION phasekit");
      await owner.query("BEGIN");
      await owner.query("SET LOCAL search_path = phasekit, public");
      for (const m of MIGRATIONS.filter((m) => m.version >= 9)) await owner.query(m.sql);
      await owner.query("COMMIT");
      await owner.end();
      const o2 = new pg.Pool({ connectionString: url("phasekit"), max: 1 });
      await o2.query(`CREATE ROLE ${role} LOGIN`);
      await o2.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`);
      await o2.end();
      const e = await failure(openPostgresPlanStore({ connectionString: url(role) }));
      // Was READ_FAILED "cannot reach the database" (has_function_privilege by name raised 42883).
      expect(e).toMatchObject({ name: "WorkflowError", code: "INVALID_CONFIG", details: { value: "phasekit_fence_refused(text, text)" } });
      expect(e?.message).toMatch(/not on the search_path/);
      expect(String(e?.details?.hint)).toMatch(/as the schema owner/);
    });

    it("a table missing from the runner's search_path: a typed error naming it, not an unreachable database", async () => {
      const { url } = await freshDb();
      await migrate(url("phasekit"));
      const owner = new pg.Pool({ connectionString: url("phasekit"), max: 1 });
      await owner.query("DROP TABLE phasekit_control");
      await owner.end();
      const e = await failure(openPostgresPlanStore({ connectionString: url("phasekit") }));
      // Was READ_FAILED "cannot reach the database" (has_table_privilege by name raised 42P01).
      expect(e).toMatchObject({ name: "WorkflowError", code: "INVALID_CONFIG", details: { value: ["phasekit_control"] } });
      expect(e?.message).toMatch(/phasekit_control are not on the search_path/);
    });
  });
}
