import { randomUUID } from "node:crypto";
import { afterAll, describe, it } from "vitest";
// The one contract suite, imported (not copied) from the fs store's package.
import { runPlanStoreContract } from "../../adapters-pi/test/contract/plan-store-contract.js";
import { openPostgresPlanStore } from "../src/index.js";
import { startCluster } from "./helpers/cluster.js";

const started = startCluster();
if (started.ok) {
  const { cluster } = started;
  afterAll(() => cluster.destroy());
  // Each test gets a fresh namespace in the same database: an empty store, as the contract asks.
  runPlanStoreContract("postgres", () => openPostgresPlanStore({ connectionString: cluster.url, namespace: `contract-${randomUUID()}` }));
} else {
  describe.skip(`PlanStore contract: postgres (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
}
