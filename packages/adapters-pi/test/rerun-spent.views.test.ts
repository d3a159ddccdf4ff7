/**
 * A run that ended after a rerun without reaching the steps it marked (its body no longer calls them) is not
 * pending any more, in every view: `show` says the marks are spent (text and phasekit.show/1), `why` says the
 * step runs again only if a later re-entry reaches it, and `gc` / `rm` remove it as any finished run. Before,
 * gc kept it for ever (`rerun-pending`) and `rm` refused it.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createReporter, rerunFrom, runWorkflow } from "../src/index.js";
import { phasekitInProcess } from "./cli/helpers/run-cli.js";
import { useTempRepos } from "./helpers/temp-repos.js";

const repo = useTempRepos("pk-rerun-spent-");

async function run(root: string, steps: readonly string[]): Promise<void> {
  await runWorkflow({ repoRoot: root, target: "shrunk", toolName: "t", reenter: true, createReporter: () => createReporter({ onChange: () => undefined }) }, async (ctx) => {
    for (const id of steps) await ctx.step(id, null, () => id);
  });
}

describe("spent rerun marks in the views", () => {
  it("show, why, gc and rm read the spend: the run is an ordinary finished run", async () => {
    const root = repo();
    await run(root, ["a", "b", "c"]);
    await rerunFrom({ repoRoot: root, target: "shrunk", from: "b" });
    await run(root, ["a"]);

    const shown = await phasekitInProcess(["--repo", root, "show", "shrunk", "--json"]);
    const doc = JSON.parse(shown.stdout) as { steps: Array<{ stepId: string; superseded: boolean; rerunSpent: boolean }> };
    expect(doc.steps.map((s) => `${s.stepId}:${s.superseded}:${s.rerunSpent}`)).toEqual(["a:false:false", "b:true:true", "c:true:true"]);
    const text = (await phasekitInProcess(["--repo", root, "show", "shrunk"])).stdout;
    expect(text.split("\n").find((l) => /^\s+c\s/.test(l))).toContain("superseded, rerun spent");
    const why = await phasekitInProcess(["--repo", root, "why", "shrunk", "c", "--json"]);
    expect(JSON.parse(why.stdout)).toMatchObject({ decision: "run", reason: "superseded", explanation: expect.stringContaining("ended without reaching it") });

    const rm = await phasekitInProcess(["--repo", root, "rm", "shrunk"]);
    expect(rm.code, rm.stderr).toBe(0);
    expect(existsSync(path.join(root, "ai_plan", "shrunk"))).toBe(false);
  });
});
