/**
 * Where the CLI looks for runs: a flag wins over the environment. `--plan-root` given while PHASEKIT_STORE is set
 * reads that plan root (it was bad usage, exit 2); `--store` with `--plan-root` still names two places (exit 2).
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { writeWorkflowMetadata } from "../../src/store/metadata.js";
import { sampleMetadata } from "../helpers/metadata-fixtures.js";
import { json, phasekitInProcess } from "./helpers/run-cli.js";

// Never reached: the flag must win before anything connects (port 1 refuses at once if it were).
const ENV = { PHASEKIT_STORE: "postgres://nobody@127.0.0.1:1/none" };
const temps: string[] = [];
afterEach(() => temps.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

async function planRootWithRun(slug: string): Promise<string> {
  const root = mkdtempSync(path.join(tmpdir(), "pk-store-choice-"));
  temps.push(root);
  const planRoot = path.join(root, "elsewhere");
  mkdirSync(path.join(planRoot, slug), { recursive: true });
  const w = await writeWorkflowMetadata(path.join(planRoot, slug, "workflow.json"), { ...sampleMetadata(slug), status: "completed" }, { expectedGeneration: null });
  if (!w.ok) throw w.error;
  return planRoot;
}

describe("the CLI's place for runs: flag > environment", () => {
  it("--plan-root with PHASEKIT_STORE set reads the plan root", async () => {
    const planRoot = await planRootWithRun("here");
    const r = await phasekitInProcess(["--plan-root", planRoot, "--json", "list"], { env: ENV });
    expect(r.code, r.stderr).toBe(0);
    expect(json<{ runs: Array<{ id: string; status: string }> }>(r.stdout, "phasekit.list/1").runs).toMatchObject([{ id: "here", status: "completed" }]);
  });

  it("--store and --plan-root together are still bad usage (exit 2), whatever the environment says", async () => {
    const planRoot = await planRootWithRun("here");
    for (const env of [{}, ENV]) {
      const r = await phasekitInProcess(["--store", ENV.PHASEKIT_STORE, "--plan-root", planRoot, "list"], { env });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("--plan-root and --store name two places for runs");
    }
  });

  it("without --plan-root, PHASEKIT_STORE still names the store (a malformed one is bad usage naming the variable)", async () => {
    const planRoot = await planRootWithRun("here");
    const r = await phasekitInProcess(["--repo", path.dirname(planRoot), "list"], { env: { PHASEKIT_STORE: "mysql://x" } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("PHASEKIT_STORE");
  });
});
