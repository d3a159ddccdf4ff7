/**
 * `phasekit show --store postgres://…` shows what a run spent (its latest `phasekit:budget#n` total) read through
 * the store, as it does for a plan folder; not by opening a plan-folder path named after the store's label.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createReporter, rerunFrom, runWorkflow, type RunContext } from "@phasekit/adapters-pi";
import { phasekitInProcess } from "../../adapters-pi/test/cli/helpers/run-cli.js";
import { runPage } from "../../adapters-pi/src/cli/inspector-api.js";
import { parseStoreUrl } from "../../adapters-pi/src/store/store-url.js";
import { closeStores } from "../../adapters-pi/src/cli/store-runs.js";
import { openPostgresPlanStore } from "../src/index.js";
import { startCluster } from "./helpers/cluster.js";

const started = startCluster();

/** The phasekit CLI in this process (it opens its own store from the URL, as a user's shell would). */
const cli = (args: string[]) => phasekitInProcess(args);

if (!started.ok) {
  describe.skip(`phasekit show --store: budget (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  afterAll(() => cluster.destroy());

  describe("phasekit show --store: what the run spent", () => {
    it("reads the latest budget total from the store's history", async () => {
      const namespace = `budget-${randomUUID().slice(0, 8)}`;
      const url = `${cluster.url}${cluster.url.includes("?") ? "&" : "?"}namespace=${namespace}`;
      const repoRoot = mkdtempSync(path.join(tmpdir(), "phasekit-pg-budget-"));
      const store = await openPostgresPlanStore({ connectionString: cluster.url, namespace });
      try {
        const r = await runWorkflow({ repoRoot, target: "b1", toolName: "budget-bot", store, budgets: { turns: 10 } }, async (ctx) => {
          await ctx.budget.spend({ turns: 1, tokens: 100 });
          await ctx.budget.spend({ turns: 2, tokens: 50 });
          return ctx.step("after", {}, () => 1);
        });
        expect(r.status).toBe("completed");
      } finally {
        await store.close();
      }
      const shown = await cli(["show", "b1", "--store", url, "--repo", repoRoot, "--fields", "budget"]);
      expect(shown.code).toBe(0);
      const doc = JSON.parse(shown.stdout) as { budget: { used: { turns: number; tokens: number } | null } | null };
      expect(doc.budget?.used).toMatchObject({ turns: 3, tokens: 150 });
      // The inspector's run page reads it the same way.
      try {
        const page = (await runPage({ roots: { repoRoot, store: parseStoreUrl(url, "store") }, defDirs: [], now: () => new Date() }, "b1")) as { budget: { used: unknown } | null };
        expect(page.budget?.used).toMatchObject({ turns: 3, tokens: 150 });
      } finally {
        await closeStores();
      }
    }, 60_000);

    it("after a rerun whose body spends fewer times, shows the rerun's total, not the first run's", async () => {
      const namespace = `budget-${randomUUID().slice(0, 8)}`;
      const url = `${cluster.url}${cluster.url.includes("?") ? "&" : "?"}namespace=${namespace}`;
      const repoRoot = mkdtempSync(path.join(tmpdir(), "phasekit-pg-budget-"));
      const store = await openPostgresPlanStore({ connectionString: cluster.url, namespace });
      const body = (spends: number) => async (ctx: RunContext) => {
        for (let i = 1; i <= spends; i++) {
          await ctx.step(`s${i}`, { i }, () => i);
          await ctx.budget.spend({ turns: 1, tokens: 10 * i });
        }
      };
      const enter = (spends: number) => runWorkflow({ repoRoot, target: "b3", toolName: "budget-bot", store, reenter: true, createReporter: () => createReporter({ onChange: () => undefined }) }, body(spends));
      const used = async () => {
        const shown = await cli(["show", "b3", "--store", url, "--repo", repoRoot, "--fields", "budget"]);
        expect(shown.code).toBe(0);
        return (JSON.parse(shown.stdout) as { budget: { used: unknown } | null }).budget?.used;
      };
      try {
        expect(await enter(5)).toMatchObject({ status: "completed" });
        expect(await used()).toMatchObject({ turns: 5, tokens: 150 });
        await rerunFrom({ store, target: "b3", from: "s2" });
        expect(await enter(2)).toMatchObject({ status: "completed" });
      } finally {
        await store.close();
      }
      expect(await used()).toMatchObject({ turns: 2, tokens: 30 });
      try {
        const page = (await runPage({ roots: { repoRoot, store: parseStoreUrl(url, "store") }, defDirs: [], now: () => new Date() }, "b3")) as { budget: { used: unknown } | null };
        expect(page.budget?.used).toMatchObject({ turns: 2, tokens: 30 });
      } finally {
        await closeStores();
      }
    }, 60_000);
  });
}
