/**
 * The inspector (`phasekit ui --store postgres://…`) while the database is down: its API answers with the
 * typed error a command would print (the code, the message naming the lost database, the hint) and 503, the status
 * of a service that cannot reach what it depends on, on the runs list, a run's page and its change stream;
 * once the server is back, the same requests answer 200 again. Before, the list and the stream answered a raw
 * 500 `INTERNAL` with the driver's text.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runWorkflow } from "@phasekit/adapters-pi";
import { startInspector } from "../../adapters-pi/src/cli/ui-server.js";
import { openPostgresPlanStore } from "../src/index.js";
import { startCluster } from "./helpers/cluster.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`postgres inspector outage (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  afterAll(async () => {
    const { closeStores } = await import("../../adapters-pi/src/cli/store-runs.js");
    await closeStores();
    cluster.destroy();
  });

  describe("postgres inspector: the database down", () => {
    it("the runs list, a run page and its change stream answer a typed 503 with the hint, and 200 once the server is back", async () => {
      const namespace = `outage-${randomUUID().slice(0, 8)}`;
      const repoRoot = mkdtempSync(path.join(tmpdir(), "phasekit-pg-outage-"));
      const store = await openPostgresPlanStore({ connectionString: cluster.url, namespace });
      await runWorkflow({ repoRoot, target: "one", toolName: "t", store }, async (ctx) => {
        await ctx.step("a", {}, () => 1);
        return "ok";
      });
      await store.close();
      const inspector = await startInspector({ roots: { repoRoot, store: { kind: "postgres", connectionString: cluster.url, namespace, label: `postgres:${namespace}` } }, defDirs: [], port: 0 });
      const get = async (p: string) => {
        const res = await fetch(`${inspector.origin}${p}`, { headers: { "x-phasekit-token": inspector.token } });
        const text = await res.text();
        return { status: res.status, type: res.headers.get("content-type"), body: JSON.parse(text) as { error?: { code: string; message: string; hint?: string } } };
      };
      try {
        expect((await get("api/runs")).status).toBe(200);
        cluster.stop("immediate");
        for (const p of ["api/runs", "api/runs/one", "api/runs/one/events"]) {
          const r = await get(p);
          expect(r.status, `${p}: ${JSON.stringify(r.body)}`).toBe(503);
          expect(r.type).toMatch(/^application\/json/);
          expect(r.body.error?.code, p).toBe("READ_FAILED");
          expect(r.body.error?.message, p).toMatch(/database connection was lost|cannot reach the database/);
          expect(r.body.error?.message, p).not.toMatch(/^\[phasekit\]/);
          expect(r.body.error?.hint, p).toMatch(/database is reachable|server is running/);
        }
        cluster.start();
        expect((await get("api/runs")).status).toBe(200);
        expect((await get("api/runs/one")).status).toBe(200);
      } finally {
        await inspector.close();
      }
    });
  });
}
