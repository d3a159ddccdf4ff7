/**
 * `phasekit show --store postgres://…` prints a run's pinned definitions against the folders' as it does for a plan
 * folder (issue 19): the pin is read from the store's history without its lease.
 */
import { randomUUID } from "node:crypto";
import { cpSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { createReporter, runWorkflow } from "@phasekit/adapters-pi";
import { phasekitInProcess } from "../../adapters-pi/test/cli/helpers/run-cli.js";
import { loadDefinitionFolders } from "../../adapters-pi/src/definitions/folders.js";
import { openPostgresPlanStore } from "../src/index.js";
import { startCluster } from "./helpers/cluster.js";

const FIXTURE = fileURLToPath(new URL("../../adapters-pi/test/cli/fixtures/workflows", import.meta.url));
const started = startCluster();

/** The phasekit CLI in this process (it opens its own store from the URL, as a user's shell would). */
const cli = (args: string[]) => phasekitInProcess(args);

if (!started.ok) {
  describe.skip(`phasekit show --store: definitions (SKIPPED: ${started.reason})`, () => it("needs PostgreSQL", () => undefined));
} else {
  const { cluster } = started;
  afterAll(() => cluster.destroy());

  describe("phasekit show --store: the run's pinned definitions against the folders'", () => {
    it("a phase inserted before the current one: the diff by phase id, the pin found in the store, the choices", async () => {
      const namespace = `defs-${randomUUID().slice(0, 8)}`;
      const url = `${cluster.url}${cluster.url.includes("?") ? "&" : "?"}namespace=${namespace}`;
      const repoRoot = mkdtempSync(path.join(tmpdir(), "phasekit-pg-defs-"));
      const defs = path.join(repoRoot, "defs");
      cpSync(FIXTURE, defs, { recursive: true });
      const store = await openPostgresPlanStore({ connectionString: cluster.url, namespace });
      try {
        const registry = loadDefinitionFolders([defs]).registry;
        await runWorkflow(
          { repoRoot, target: "r1", toolName: "ship-bot", store, createReporter: () => createReporter({ onChange: () => undefined }), workflow: { registry, workflowKey: "ship", taskDescription: "fix" } },
          async (ctx) => void (await ctx.workflow?.dispatch({ type: "advance" })),
        );
      } finally {
        await store.close();
      }
      const same = await cli(["show", "r1", "--store", url, "--repo", repoRoot, "--defs", defs]);
      expect(same.stdout).toContain("defs     unchanged (pinned in the run's history)");
      writeFileSync(path.join(defs, "ship", "lint.md"), "---\nid: lint\nname: Lint\n---\nRun the linter.\n");
      writeFileSync(path.join(defs, "ship", "workflow.yaml"), 'name: "Ship a change"\ncommandName: "ship"\nloopable: false\nphases:\n  - plan.md\n  - lint.md\n  - subworkflow: check\n  - report.md\n');
      const changed = await cli(["show", "r1", "--store", url, "--repo", repoRoot, "--defs", defs]);
      expect(changed.code).toBe(0);
      expect(changed.stdout).toContain("defs     changed since the run was pinned (pinned in the run's history):\n             ship: changed (lint added)");
      expect(changed.stdout).toContain("choices when it is resumed: keep, move, restart-scope, cancel");
      expect(changed.stdout).toContain("Ship a change > Check [2/3] > 🧪 Test [1/2]");
    }, 60_000);
  });
}
