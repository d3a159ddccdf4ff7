/**
 * recoverRuns: a run whose process was SIGKILLed mid-run is resumed at start (its finished step reused), a run a
 * live process holds is left alone (`held`), a paused run and another tool's run are not touched.
 */
import { afterEach, describe, expect, it } from "vitest";
import { recoverRuns, requestPause, runWorkflow } from "../src/index.js";
import { spawnLockChild, type LockChild } from "./helpers/lock-children.js";
import { useTempRepos } from "./helpers/temp-repos.js";

const tempRepo = useTempRepos("phasekit-recover-");
const children: LockChild[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) {
    c.proc.kill("SIGKILL");
    await c.exited;
  }
});

async function startChild(repoRoot: string, slug: string, tool = "recover-test"): Promise<LockChild> {
  const child = spawnLockChild("recover-child.mjs", [repoRoot, slug, tool]);
  children.push(child);
  await child.waitFor(/^ready$/);
  return child;
}

describe("recoverRuns", () => {
  it("resumes a crashed run, leaves a live one, a paused one and another tool's alone", async () => {
    const repoRoot = tempRepo();
    const crashed = await startChild(repoRoot, "crashed");
    crashed.proc.kill("SIGKILL");
    await crashed.exited;
    await startChild(repoRoot, "alive");
    const other = await startChild(repoRoot, "other-tool", "someone-else");
    other.proc.kill("SIGKILL");
    await other.exited;
    // A paused run of the same tool, and a crashed-looking run of another tool.
    const paused = runWorkflow({ repoRoot, target: "paused", toolName: "recover-test" }, async (ctx) => {
      await requestPause({ repoRoot, target: "paused", reason: "later" });
      await ctx.step("a", {}, () => 1);
    });
    expect((await paused).status).toBe("paused");

    const ran: string[] = [];
    const report = await recoverRuns({ repoRoot, toolName: "recover-test" }, async (ctx) => {
      const a = await ctx.step("a", {}, () => (ran.push(`${ctx.slug}:a`), { by: process.pid }));
      await ctx.step("b", {}, () => void ran.push(`${ctx.slug}:b`));
      return { slug: ctx.slug, steps: ctx.steps.map((s) => `${s.stepId}:${s.outcome}`), a };
    });
    const bySlug = Object.fromEntries(report.map((r) => [r.slug, r]));
    expect(Object.keys(bySlug).sort()).toEqual(["alive", "crashed"]);
    const resumed = bySlug["crashed"];
    expect(resumed?.outcome).toBe("resumed");
    if (resumed?.outcome !== "resumed" || resumed.result.status !== "completed") throw new Error(JSON.stringify(resumed));
    expect(resumed.result.result.steps).toEqual(["a:reused", "b:ran"]);
    expect(resumed.result.result.a.by).toBe(crashed.proc.pid);
    expect(bySlug["alive"]).toMatchObject({ outcome: "held" });
    expect(ran).toEqual(["crashed:b"]);
  });
});
