import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
// The one contract suite, imported (not copied) from the fs store's package.
import { runPlanStoreContract } from "../../adapters-pi/test/contract/plan-store-contract.js";
import { runHistoryContract } from "../../adapters-pi/test/contract/history-contract.js";
import { openPostgresPlanStore } from "../src/index.js";
import { startCluster } from "./helpers/cluster.js";
import { storeSetup } from "./helpers/stores.js";

const started = startCluster();
if (started.ok) {
  const { cluster } = started;
  const { expire } = storeSetup(cluster, { adminMax: 1 });
  const namespaceOf = (store: { planRoot: string }): string => store.planRoot.slice("postgres:".length);
  // Each test gets a fresh namespace in the same database: an empty store, as the contract asks.
  runPlanStoreContract("postgres", () => openPostgresPlanStore({ connectionString: cluster.url, namespace: `contract-${randomUUID()}` }), {
    reopen: (store) => openPostgresPlanStore({ connectionString: cluster.url, namespace: namespaceOf(store) }),
    // The lease runs out (a holder stalled past it): the next lock takes the run; the holder's heartbeat has not run yet.
    loseLock: async (store, slug) => {
      await expire(namespaceOf(store), slug);
    },
  });
  runHistoryContract("postgres", () => openPostgresPlanStore({ connectionString: cluster.url, namespace: `history-${randomUUID()}` }));
} else {
  describe.skip(`PlanStore contract: postgres (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
}

if (started.ok) {
  const { cluster } = started;
  describe("docs/postgres.md example (examples/postgres-run.ts)", () => {
    it("runs the release on PostgreSQL, and a second machine finds it completed with both steps kept", async () => {
      const { mkdtempSync } = await import("node:fs");
      const { tmpdir } = await import("node:os");
      const path = await import("node:path");
      const { releaseOnPostgres } = await import("../../../examples/postgres-run.js");
      const ns = `example-${randomUUID()}`;
      const first = await releaseOnPostgres(cluster.url, mkdtempSync(path.join(tmpdir(), "phasekit-ex-")), ns);
      expect(first).toMatchObject({ status: "completed", result: "released", steps: [{ stepId: "plan", outcome: "ran" }, { stepId: "apply", outcome: "ran" }] });
      const store = await openPostgresPlanStore({ connectionString: cluster.url, namespace: ns });
      const cps = await store.checkpoints("release-42", { now: () => new Date() });
      expect((await cps.records()).map((r) => [r.stepId, r.status]).sort()).toEqual([["apply", "completed"], ["plan", "completed"]]);
      expect(await store.readMetadata("release-42")).toMatchObject({ ok: true, metadata: { status: "completed" } });
      await store.close();
    });
  });
}
