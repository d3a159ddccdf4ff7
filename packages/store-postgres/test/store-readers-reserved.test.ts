/**
 * `phasekit list` and `show` with `--store postgres://…` show a run's body steps, as they do for a plan folder:
 * phasekit's own history entries (`phasekit:budget#n`, a wait's start, the definitions pin) are no steps.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runWorkflow } from "@phasekit/adapters-pi";
import { phasekitInProcess } from "../../adapters-pi/test/cli/helpers/run-cli.js";
import { openPostgresPlanStore } from "../src/index.js";
import { startCluster } from "./helpers/cluster.js";

const started = startCluster();

/** The phasekit CLI in this process (it opens its own store from the URL, as a user's shell would). */
const cli = (args: string[]) => phasekitInProcess(args);

const body = async (ctx: Parameters<Parameters<typeof runWorkflow>[1]>[0]) => {
  await ctx.step("a", {}, () => 1);
  await ctx.budget.spend({ turns: 1 });
};

if (!started.ok) {
  describe.skip(`--store readers: body steps only (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  afterAll(() => cluster.destroy());

  describe("list and show --store: phasekit's own entries are no steps", () => {
    it("the same last step and step list as the plan folder's", async () => {
      const namespace = `reserved-${randomUUID().slice(0, 8)}`;
      const url = `${cluster.url}${cluster.url.includes("?") ? "&" : "?"}namespace=${namespace}`;
      const repoRoot = mkdtempSync(path.join(tmpdir(), "phasekit-pg-reserved-"));
      const store = await openPostgresPlanStore({ connectionString: cluster.url, namespace });
      try {
        expect((await runWorkflow({ repoRoot, target: "r1", toolName: "bot", store, budgets: { turns: 10 } }, body)).status).toBe("completed");
      } finally {
        await store.close();
      }
      expect((await runWorkflow({ repoRoot, target: "r1", toolName: "bot", budgets: { turns: 10 } }, body)).status).toBe("completed");
      const facts = async (extra: string[]) => {
        const list = await cli(["list", "--json", "--repo", repoRoot, ...extra]);
        const show = await cli(["show", "r1", "--json", "--repo", repoRoot, ...extra]);
        expect([list.code, show.code]).toEqual([0, 0]);
        const run = (JSON.parse(list.stdout) as { runs: Array<{ id: string; lastStep: string | null }> }).runs.find((r) => r.id === "r1");
        return { lastStep: run?.lastStep, steps: (JSON.parse(show.stdout) as { steps: Array<{ stepId: string }> }).steps.map((s) => s.stepId) };
      };
      const folder = await facts([]);
      expect(folder).toEqual({ lastStep: "a", steps: ["a"] });
      expect(await facts(["--store", url])).toEqual(folder);
    }, 60_000);
  });
}
