/** The examples of docs/gates.md run as written: the definitions validate, the code example ships after an approval. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as tick } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { isWorkflowError } from "@phasekit/core";
import { requestApproval } from "@phasekit/adapters-pi";
import { shipWithApproval } from "../../../examples/gates/approval-run.js";
import { loadDefinitionFolders } from "../src/definitions/folders.js";
import { phasekitInProcess } from "./cli/helpers/run-cli.js";

const EXAMPLES = path.resolve(import.meta.dirname, "../../../examples/gates/workflows");
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

describe("docs/gates.md examples", () => {
  it("the example definitions load with their budgets, progress thresholds and gates; phasekit validate accepts them", async () => {
    const r = loadDefinitionFolders([EXAMPLES]);
    expect(r.problems).toEqual([]);
    expect(r.registry.workflows.get("budgeted")?.budgets).toEqual({ turns: 2, onExhausted: "pause" });
    expect(r.registry.workflows.get("gated")?.phases[1]).toMatchObject({ id: "ship", gates: { onReject: "build", approve: { prompt: "Ship it? Choose the release channel." } } });
    const v = await phasekitInProcess(["validate", EXAMPLES]);
    expect(v.code, v.stderr).toBe(0);
  });

  it("the code example waits for the approval filed while it runs, then ships to the chosen channel", async () => {
    const repo = mkdtempSync(path.join(tmpdir(), "pk-gates-ex-"));
    dirs.push(repo);
    const run = shipWithApproval(repo, "rel", { pollMs: 20 });
    // The run exists once its first write is done: file the decision as soon as the store takes it.
    for (;;) {
      try {
        await requestApproval({ repoRoot: repo, target: "rel", approval: { decision: "approve", name: "ship", data: { channel: "stable" } } });
        break;
      } catch (error) {
        if (!isWorkflowError(error, "NOT_FOUND")) throw error;
        await tick(10);
      }
    }
    const done = await run;
    expect(done.status).toBe("completed");
    expect(done.status === "completed" && done.result).toEqual({ shipped: true, channel: "stable", artifact: "artifact-rel", turnsLeft: 19 });
  });
});
