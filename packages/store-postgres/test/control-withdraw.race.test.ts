/**
 * The withdraw race on PostgreSQL (the fs and memory stores: adapters-pi/test/control-withdraw.race.test.ts):
 * after a withdrawal is acknowledged the run does not pause, and a pause the holder took is not withdrawn.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, it } from "vitest";
import { withdrawRaceCases } from "../../adapters-pi/test/contract/withdraw-race-cases.js";
import type { PlanStore } from "@phasekit/adapters-pi";
import { openPostgresPlanStore } from "../src/index.js";
import { startCluster } from "./helpers/cluster.js";

const started = startCluster();
if (!started.ok) {
  describe.skip(`withdraw race: postgres (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const open: PlanStore[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
    dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
  });
  afterAll(() => cluster.destroy());
  describe("withdraw race: postgres", () => {
    withdrawRaceCases(async () => {
      const namespace = `withdraw-${randomUUID()}`;
      const store = await openPostgresPlanStore({ connectionString: cluster.url, namespace });
      const other = await openPostgresPlanStore({ connectionString: cluster.url, namespace });
      open.push(store, other);
      const repoRoot = mkdtempSync(path.join(tmpdir(), "pk-withdraw-pg-"));
      dirs.push(repoRoot);
      return { store, other, repoRoot };
    });
  });
}
