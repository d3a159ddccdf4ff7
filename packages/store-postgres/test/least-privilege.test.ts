/**
 * Least privilege: the owner migrates once (migrate(), or the sql/ files with psql: the cluster helper applies
 * them that way); a role with only SELECT/INSERT/UPDATE/DELETE then opens and runs. Every open or connection
 * failure is a typed WorkflowError with a fix hint: schema too old or too new, missing grants, an unknown role
 * or database, a wrong password, a refused connection.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { runWorkflow } from "@phasekit/adapters-pi";
import { migrate, MIGRATIONS, openPostgresPlanStore, SCHEMA_VERSION } from "../src/index.js";
import { startCluster } from "./helpers/cluster.js";
import { failure } from "./helpers/failure.js";
import { storeSetup } from "./helpers/stores.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`postgres least privilege (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const { admin } = storeSetup(cluster);
  const urlAs = (user: string, db = "phasekit") => `postgres://${user}@127.0.0.1:${cluster.port}/${db}`;
  const freshDb = async (): Promise<string> => {
    const db = `lp_${randomUUID().replaceAll("-", "")}`;
    await admin.query(`CREATE DATABASE ${db}`);
    return urlAs("phasekit", db);
  };

  describe("postgres: least privilege and typed open errors", () => {
    it("a role with only SELECT/INSERT/UPDATE/DELETE opens and runs a workflow after the owner migrated", async () => {
      const role = `runner_${randomUUID().slice(0, 8)}`;
      await admin.query(`CREATE ROLE ${role} LOGIN`);
      await admin.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`);
      const store = await openPostgresPlanStore({ connectionString: urlAs(role), namespace: `dml-${randomUUID()}` });
      try {
        expect(store.migrations).toEqual({ applied: [], version: SCHEMA_VERSION });
        const r = await runWorkflow({ repoRoot: mkdtempSync(path.join(tmpdir(), "phasekit-pg-dml-")), toolName: "t", target: "dml", store }, async (ctx) => {
          await ctx.step("s0", { n: 0 }, () => ({ ok: true }));
          return "done";
        });
        expect(r).toMatchObject({ status: "completed", result: "done" });
        // The readers' one-statement looks need no more than SELECT (xmin is a column of every row).
        expect(await store.listRunFacts?.()).toEqual([expect.objectContaining({ slug: "dml", lease: null, steps: { current: null, last: "s0" } })]);
        expect(await store.runSignature?.("dml")).toMatch(/^\(/);
        expect((await store.gc({ keep: 0, now: () => new Date() })).removed.map((x) => x.slug)).toEqual(["dml"]);
      } finally {
        await store.close();
      }
    });

    it("a role missing a grant is told which tables and the GRANT to run", async () => {
      const role = `partial_${randomUUID().slice(0, 8)}`;
      await admin.query(`CREATE ROLE ${role} LOGIN`);
      await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role}`);
      const e = await failure(openPostgresPlanStore({ connectionString: urlAs(role) }));
      expect(e).toMatchObject({ name: "WorkflowError", code: "INVALID_CONFIG", details: { field: "connectionString" } });
      expect(e?.details?.value).toContain("phasekit_runs");
      expect(String(e?.details?.hint)).toMatch(/^GRANT SELECT, INSERT, UPDATE, DELETE ON .*phasekit_runs/);
    });

    it("an unmigrated database: UNSUPPORTED_VERSION naming migrate(); migrate() then open works; a newer schema is refused too", async () => {
      const url = await freshDb();
      const e = await failure(openPostgresPlanStore({ connectionString: url }));
      expect(e).toMatchObject({ code: "UNSUPPORTED_VERSION", details: { value: 0, expected: SCHEMA_VERSION } });
      expect(String(e?.details?.hint)).toMatch(/migrate\(/);
      expect(await migrate(url)).toEqual({ applied: MIGRATIONS.map((m) => m.version), version: SCHEMA_VERSION });
      const store = await openPostgresPlanStore({ connectionString: url });
      await store.close();
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      await pool.query("INSERT INTO phasekit_schema (version) VALUES ($1)", [SCHEMA_VERSION + 1]);
      await pool.end();
      const newer = await failure(openPostgresPlanStore({ connectionString: url }));
      expect(newer).toMatchObject({ code: "UNSUPPORTED_VERSION", details: { value: SCHEMA_VERSION + 1 } });
      expect(String(newer?.details?.hint)).toMatch(/upgrade @phasekit\/store-postgres/);
    });

    it("a role that may not execute the fence's refusal function: INVALID_CONFIG naming the GRANT", async () => {
      const url = await freshDb();
      await migrate(url);
      const owner = new pg.Pool({ connectionString: url, max: 1 });
      const role = `norefuse_${randomUUID().slice(0, 8)}`;
      await owner.query(`CREATE ROLE ${role} LOGIN`);
      await owner.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`);
      await owner.query("REVOKE EXECUTE ON FUNCTION phasekit_fence_refused(text, text) FROM PUBLIC");
      await owner.end();
      const e = await failure(openPostgresPlanStore({ connectionString: url.replace("postgres://phasekit@", `postgres://${role}@`) }));
      expect(e).toMatchObject({ name: "WorkflowError", code: "INVALID_CONFIG", details: { value: "phasekit_fence_refused(text, text)" } });
      expect(String(e?.details?.hint)).toMatch(/GRANT EXECUTE ON FUNCTION phasekit_fence_refused\(text, text\) TO/);
    });

    it("unknown role, unknown database, refused connection: typed errors with the fix", async () => {
      const role = await failure(openPostgresPlanStore({ connectionString: urlAs("nobody_here") }));
      expect(role).toMatchObject({ name: "WorkflowError", code: "INVALID_CONFIG", details: { sqlState: "28000" } });
      const db = await failure(openPostgresPlanStore({ connectionString: urlAs("phasekit", "no_such_db") }));
      expect(db).toMatchObject({ name: "WorkflowError", code: "INVALID_CONFIG", details: { sqlState: "3D000" } });
      // A port nobody listens on.
      const port = await new Promise<number>((resolve) => {
        const s = createServer().listen(0, "127.0.0.1", () => {
          const p = (s.address() as { port: number }).port;
          s.close(() => resolve(p));
        });
      });
      const refused = await failure(openPostgresPlanStore({ connectionString: `postgres://phasekit@127.0.0.1:${port}/phasekit` }));
      expect(refused).toMatchObject({ name: "WorkflowError", code: "READ_FAILED", details: { connectionLost: true } });
      expect(String(refused?.details?.hint)).toMatch(/host and port/);
    });

    it("a wrong password: INVALID_CONFIG naming the password (28P01)", async () => {
      const role = `pw_${randomUUID().slice(0, 8)}`;
      await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'right-one'`);
      // The throwaway cluster trusts every local connection; make this one role use a password (first match wins).
      const hba = (await admin.query<{ hba_file: string }>("SHOW hba_file")).rows[0]?.hba_file as string;
      writeFileSync(hba, `host all ${role} 127.0.0.1/32 scram-sha-256\n${readFileSync(hba, "utf8")}`);
      await admin.query("SELECT pg_reload_conf()");
      const e = await failure(openPostgresPlanStore({ connectionString: `postgres://${role}:wrong-one@127.0.0.1:${cluster.port}/phasekit` }));
      expect(e).toMatchObject({ name: "WorkflowError", code: "INVALID_CONFIG", details: { sqlState: "28P01" } });
      expect(String(e?.details?.hint)).toMatch(/password/);
    });
  });
}
