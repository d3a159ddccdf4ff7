/**
 * gc and a pending rerun: a finished run on which `phasekit rerun --from` was made, and that was not resumed yet,
 * is kept (reason `rerun-pending`), by gc, its dry run and `phasekit rm`; once resumed (the steps ran again) it
 * is an ordinary finished run and goes. Before, gc removed it and the rerun was lost with the run.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createReporter, rerunFrom, runWorkflow } from "../src/index.js";
import { gc } from "../src/store/retention.js";
import { phasekitInProcess } from "./cli/helpers/run-cli.js";
import { useTempRepos } from "./helpers/temp-repos.js";

const repo = useTempRepos("pk-gc-rerun-");
const later = () => new Date(Date.now() + 86_400_000);

async function finishedRun(root: string, slug: string, ran: string[]): Promise<void> {
  await runWorkflow({ repoRoot: root, target: slug, toolName: "t", reenter: true, createReporter: () => createReporter({ onChange: () => undefined }) }, async (ctx) => {
    for (const id of ["a", "b", "c"]) await ctx.step(id, null, () => (ran.push(id), id));
  });
}

describe("gc keeps a run that waits for a rerun", () => {
  it("kept while the rerun mark waits (gc, dry run, rm); removed once the run was resumed", async () => {
    const root = repo();
    const planRoot = path.join(root, "ai_plan");
    const ran: string[] = [];
    await finishedRun(root, "marked", ran);
    await finishedRun(root, "plain", ran);
    await rerunFrom({ repoRoot: root, target: "marked", from: "b" });

    const dry = await gc({ planRoot, keep: 0, now: later, dryRun: true });
    expect(dry.removed.map((e) => e.slug)).toEqual(["plain"]);
    expect(dry.kept).toMatchObject([{ slug: "marked", reason: "rerun-pending", status: "completed" }]);
    const rm = await phasekitInProcess(["--repo", root, "rm", "marked"]);
    expect(rm.code).toBe(1);
    expect(rm.stderr).toContain("run marked waits for a rerun");
    const report = await gc({ planRoot, keep: 0, now: later });
    expect(report.removed.map((e) => e.slug)).toEqual(["plain"]);
    expect(report.kept).toMatchObject([{ slug: "marked", reason: "rerun-pending" }]);
    expect(existsSync(path.join(planRoot, "marked"))).toBe(true);

    // Resumed: b and c run again, nothing waits any more, and gc removes it as any finished run.
    ran.length = 0;
    await finishedRun(root, "marked", ran);
    expect(ran).toEqual(["b", "c"]);
    const after = await gc({ planRoot, keep: 0, now: later });
    expect(after.removed).toMatchObject([{ slug: "marked", reason: "beyond-keep" }]);
    expect(existsSync(path.join(planRoot, "marked"))).toBe(false);
  });
});
