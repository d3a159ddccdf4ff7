/**
 * A run that ended after a rerun without reaching the steps it marked (its body no longer calls them) is not
 * pending any more, in every view: `show` says the marks are spent (text and phasekit.show/1), `why` says the
 * step runs again only if a later re-entry reaches it, and `gc` / `rm` remove it as any finished run. Before,
 * gc kept it for ever (`rerun-pending`) and `rm` refused it.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createFsPlanStore, createReporter, rerunFrom, runWorkflow } from "../src/index.js";
import { gc } from "../src/store/retention.js";
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

  it("`phasekit cancel` of a run nobody runs ends it too: its marks are spent, and gc removes it", async () => {
    const root = repo();
    await run(root, ["a", "b", "c"]);
    await rerunFrom({ repoRoot: root, target: "shrunk", from: "b" });
    // The resume that would have carried out the rerun died before reaching b: the run is left running, crashed.
    const store = createFsPlanStore({ repoRoot: root });
    const read = await store.readMetadata("shrunk");
    if (!read.ok || read.metadata === null) throw new Error("no metadata");
    const { schemaVersion: _v, generation, ...m } = read.metadata;
    expect(await store.writeMetadata("shrunk", { ...m, status: "running" }, generation)).toMatchObject({ ok: true });
    await store.close();
    const cancel = await phasekitInProcess(["--repo", root, "cancel", "shrunk"]);
    expect(cancel.code, cancel.stderr).toBe(0);
    const shown = JSON.parse((await phasekitInProcess(["--repo", root, "show", "shrunk", "--json"])).stdout) as { summary: { status: string }; steps: Array<{ rerunSpent: boolean }> };
    expect(shown.summary.status).toBe("cancelled");
    expect(shown.steps.map((s) => s.rerunSpent)).toEqual([false, true, true]);
    const report = await gc({ planRoot: path.join(root, "ai_plan"), keep: 0, now: () => new Date(Date.now() + 86_400_000) });
    expect(report.removed).toMatchObject([{ slug: "shrunk", reason: "beyond-keep" }]);
  });
});
