/**
 * The withdraw race on PostgreSQL (the fs and memory stores: adapters-pi/test/control-withdraw.race.test.ts):
 * after a withdrawal is acknowledged the run does not pause, and a pause the holder took is not withdrawn.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, it } from "vitest";
import { displacedTakeCases, withdrawRaceCases } from "../../adapters-pi/test/contract/withdraw-race-cases.js";
import type { PlanStore } from "@phasekit/adapters-pi";
import { openPostgresPlanStore } from "../src/index.js";
import { startCluster } from "./helpers/cluster.js";
import { storeSetup } from "./helpers/stores.js";

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
  const { expire } = storeSetup(cluster, { adminMax: 1 });
  const setup = async () => {
    const namespace = `withdraw-${randomUUID()}`;
    const store = await openPostgresPlanStore({ connectionString: cluster.url, namespace });
    const other = await openPostgresPlanStore({ connectionString: cluster.url, namespace });
    open.push(store, other);
    const repoRoot = mkdtempSync(path.join(tmpdir(), "pk-withdraw-pg-"));
    dirs.push(repoRoot);
    // The lease runs out (a holder stalled past it): the next lock takes the run.
    const loseLock = async (slug: string): Promise<void> => {
      await expire(namespace, slug);
    };
    return { store, other, repoRoot, loseLock };
  };
  describe("withdraw race: postgres", () => {
    withdrawRaceCases(setup);
    // Only before the take: the harness ends the lease by the database's clock while the holder's own stays fresh
    // (it renewed a moment ago), which no real takeover does; a holder that stood still past its lease finds it
    // stale and confirms it. The take itself is fenced here, so a displaced holder's take is refused anyway.
    displacedTakeCases(setup, ["between its read of a pause and its take"]);
  });
}
