/**
 * gc on PostgreSQL keeps a finished run that waits for a rerun (`rerunFrom({ store })` flagged its steps and the
 * run was not resumed yet), by the fs store's rule (`awaitsRerun`); once resumed it goes as any finished run.
 * Before, gc deleted it, rerun mark and all.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createReporter, rerunFrom, runWorkflow } from "@phasekit/adapters-pi";
import { startCluster } from "./helpers/cluster.js";
import { storeSetup } from "./helpers/stores.js";

const started = startCluster();

if (!started.ok) {
  describe.skip(`gc of rerun-pending runs on PostgreSQL (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  const repoRoot = mkdtempSync(path.join(tmpdir(), "phasekit-pg-gc-rerun-"));
  // Registered first, so it runs last (after hooks run in reverse): once the stores are closed and the cluster is gone.
  afterAll(() => rmSync(repoRoot, { recursive: true, force: true }));
  const { open } = storeSetup(cluster);

  describe("gc of rerun-pending runs on PostgreSQL", () => {
    it("keeps a finished run whose rerun mark waits (dry run and real); removes it once it was resumed", async () => {
      const store = await open(`gc-rerun-${randomUUID().slice(0, 8)}`);
      const ran: string[] = [];
      const run = (target: string) =>
        runWorkflow({ repoRoot, target, toolName: "t", store, reenter: true, createReporter: () => createReporter({ onChange: () => undefined }) }, async (ctx) => {
          for (const id of ["a", "b", "c"]) await ctx.step(id, null, () => (ran.push(id), id));
        });
      expect((await run("marked")).status).toBe("completed");
      expect((await run("plain")).status).toBe("completed");
      await rerunFrom({ store, target: "marked", from: "b" });
      const later = () => new Date(Date.now() + 86_400_000);

      const dry = await store.gc({ keep: 0, now: later, dryRun: true });
      expect(dry.removed.map((e) => e.slug)).toEqual(["plain"]);
      expect(dry.kept).toMatchObject([{ slug: "marked", reason: "rerun-pending", status: "completed" }]);
      const report = await store.gc({ keep: 0, now: later });
      expect(report.removed.map((e) => e.slug)).toEqual(["plain"]);
      expect(report.kept).toMatchObject([{ slug: "marked", reason: "rerun-pending" }]);
      expect((await store.readMetadata("marked")).ok && (await store.readMetadata("marked"))).toMatchObject({ metadata: { status: "completed" } });

      ran.length = 0;
      expect((await run("marked")).status).toBe("completed");
      expect(ran).toEqual(["b", "c"]);
      const after = await store.gc({ keep: 0, now: later });
      expect(after.removed).toMatchObject([{ slug: "marked", reason: "beyond-keep" }]);
      expect(await store.readMetadata("marked")).toMatchObject({ ok: true, metadata: null });
    }, 60_000);
  });
}
