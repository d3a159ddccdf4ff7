/**
 * `phasekit show` prints how the definitions a live run is pinned to differ from the folders' now (issue 19): core's
 * diff by phase id, the choices the run has when resumed, and its position read in the pinned definitions (where
 * the run is), not shifted by a phase inserted before it.
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createReporter, runWorkflow } from "@phasekit/adapters-pi";
import { loadDefinitionFolders } from "../../src/definitions/folders.js";
import { DEFS } from "./helpers/fixture-runs.js";
import { json, phasekitInProcess } from "./helpers/run-cli.js";

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A repo with its own copy of the fixture definitions and run r1 paused at "check > test" (the second phase of ship). */
async function pausedRun(): Promise<{ repo: string; defs: string }> {
  const repo = mkdtempSync(path.join(tmpdir(), "pk-show-defs-"));
  made.push(repo);
  const defs = path.join(repo, "defs");
  cpSync(DEFS, defs, { recursive: true });
  const registry = loadDefinitionFolders([defs]).registry;
  await runWorkflow(
    { repoRoot: repo, target: "r1", toolName: "ship-bot", createReporter: () => createReporter({ onChange: () => undefined }), workflow: { registry, workflowKey: "ship", taskDescription: "fix" } },
    async (ctx) => void (await ctx.workflow?.dispatch({ type: "advance" })),
  );
  return { repo, defs };
}

/** Inserts phase `lint` before the sub-workflow reference in ship. */
function insertLint(defs: string): void {
  writeFileSync(path.join(defs, "ship", "lint.md"), "---\nid: lint\nname: Lint\n---\nRun the linter.\n");
  writeFileSync(path.join(defs, "ship", "workflow.yaml"), 'name: "Ship a change"\ncommandName: "ship"\nloopable: false\nphases:\n  - plan.md\n  - lint.md\n  - subworkflow: check\n  - report.md\n');
}

describe("phasekit show: the run's pinned definitions against the folders'", () => {
  it("unchanged folders: one line saying so", async () => {
    const { repo, defs } = await pausedRun();
    const r = await phasekitInProcess(["show", "r1", "--repo", repo, "--defs", defs]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("defs     unchanged (pinned in the run's history)");
  });

  it("a phase inserted before the current one: one change by phase id, the choices, and the position where the run is", async () => {
    const { repo, defs } = await pausedRun();
    insertLint(defs);
    const r = await phasekitInProcess(["show", "r1", "--repo", repo, "--defs", defs]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      [
        "  defs     changed since the run was pinned (pinned in the run's history):",
        "             ship: changed (lint added)",
        "             its position does not resolve in the folders' definitions as it stands (a move carries it over by phase id)",
        "             choices when it is resumed: keep, move, restart-scope, cancel",
      ].join("\n"),
    );
    // Read in the pinned definitions: still at Check > Test, not at the inserted Lint.
    expect(r.stdout).toContain("Ship a change > Check [2/3] > 🧪 Test [1/2]");
    const doc = json<{ definitions: { verdict: string; pinned: boolean; diff: unknown[]; choices: string[] } }>(
      (await phasekitInProcess(["show", "r1", "--repo", repo, "--defs", defs, "--fields", "definitions"])).stdout,
      "phasekit.show/1",
    );
    expect(doc.definitions).toMatchObject({
      verdict: "changed",
      pinned: true,
      resolves: false,
      choices: ["keep", "move", "restart-scope", "cancel"],
      diff: [{ workflowKey: "ship", change: "changed", phases: [{ id: "lint", change: "added", index: 1 }] }],
    });
  });

  it("the current phase's workflow removed from the folders: the diff says so and move is not a choice", async () => {
    const { repo, defs } = await pausedRun();
    rmSync(path.join(defs, "check"), { recursive: true });
    writeFileSync(path.join(defs, "ship", "workflow.yaml"), 'name: "Ship a change"\ncommandName: "ship"\nloopable: false\nphases:\n  - plan.md\n  - report.md\n');
    const r = await phasekitInProcess(["show", "r1", "--repo", repo, "--defs", defs, "--json"]);
    const doc = json<{ definitions: { verdict: string; choices: string[]; diff: Array<{ workflowKey: string; change: string }> } }>(r.stdout, "phasekit.show/1");
    expect(doc.definitions.verdict).toBe("changed");
    expect(doc.definitions.choices).toEqual(["keep", "restart-scope", "cancel"]);
    expect(doc.definitions.diff.map((w) => `${w.workflowKey} ${w.change}`)).toEqual(["check removed", "ship changed"]);
  });

  it("folders without the run's workflow (definitions in code): not compared, and said so", async () => {
    const { repo } = await pausedRun();
    const empty = path.join(repo, "none");
    cpSync(path.join(DEFS, "check"), path.join(empty, "check"), { recursive: true });
    const r = await phasekitInProcess(["show", "r1", "--repo", repo, "--defs", empty]);
    expect(r.stdout).toContain(`defs     not compared: the definition folders (${empty}) hold no workflow ship`);
  });
});
