/**
 * A pause filed while the runner was alive, and not yet taken when it crashed, with real processes (the rule in
 * docs/run-workflow.md, "Control signals"): the request stays filed and `phasekit show` lists it beside
 * `crashed`. The run's next life (a resume, `recoverRuns`) honours it at its first step boundary and ends
 * `paused` without running the step it had not finished: the person asked for a pause, and a restart that ran
 * on would drop it. `phasekit resume <id>` withdraws it, and the next resume then runs on; it says so, and no
 * longer that the crashed run "goes on" (it goes on only when its owner runs it again).
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { RunContext } from "../src/run/context-types.js";
import { recoverRuns } from "../src/run/recover-runs.js";
import { controlFile } from "../src/store/control-signals.js";
import { finishRun, spawnLockChild } from "./helpers/lock-children.js";
import { phasekit } from "./cli/helpers/run-cli.js";

interface Report {
  event: string;
  status?: string;
  reason?: string | null;
  signal?: string;
}

/** A run whose runner is SIGKILLed inside s1 after a pause was filed for it (and accepted: the runner was alive). */
async function crashedWithPause(name: string): Promise<{ repoRoot: string; slug: string; runDir: string }> {
  const repoRoot = mkdtempSync(path.join(tmpdir(), `phasekit-crashed-pause-${name}-`));
  const slug = name;
  const runner = spawnLockChild("run-ends-failed.mjs", [repoRoot, slug, "fail"]);
  await runner.next(/"event":"in"/, true);
  const filer = spawnLockChild("run-request.mjs", [repoRoot, slug, "pause", "pause from outside"]);
  filer.end();
  const filed = await filer.exited;
  expect(filed, filed.stderr).toMatchObject({ code: 0, signal: null });
  expect(JSON.parse(filer.lines[0] ?? "{}")).toMatchObject({ event: "requested", signal: "pause" });
  runner.proc.kill("SIGKILL");
  await runner.exited;
  return { repoRoot, slug, runDir: path.join(repoRoot, "ai_plan", slug) };
}

const resume = (repoRoot: string, slug: string): Promise<Report> => finishRun<Report>(spawnLockChild("run-ends-failed.mjs", [repoRoot, slug, "free"]));
const cli = (repoRoot: string, ...args: string[]) => phasekit([...args, "--repo", repoRoot]);

describe("runWorkflow: a pause filed before the runner crashed", () => {
  it("stays filed, is shown beside crashed, and ends the next resume paused; the resume after runs on", async () => {
    const { repoRoot, slug, runDir } = await crashedWithPause("kept");
    expect(existsSync(controlFile(runDir, "pause"))).toBe(true);
    const show = cli(repoRoot, "show", slug, "--json", "--fields", "summary,pending");
    expect(show.code, show.stderr).toBe(0);
    expect(JSON.parse(show.stdout)).toMatchObject({ summary: { status: "crashed" }, pending: { signal: "pause", reason: "pause from outside" } });

    expect(await resume(repoRoot, slug)).toMatchObject({ event: "end", status: "paused" });
    expect(existsSync(controlFile(runDir, "pause"))).toBe(false);
    expect(await resume(repoRoot, slug)).toMatchObject({ event: "end", status: "completed" });
  }, 60_000);

  it("recoverRuns honours it: the run comes back resumed and paused, and the next recoverRuns leaves it alone", async () => {
    const { repoRoot, slug } = await crashedWithPause("recovered");
    const ran: string[] = [];
    const body = async (ctx: RunContext) => {
      for (const id of ["s0", "s1", "s2"]) await ctx.step(id, { id }, () => (ran.push(id), id));
      return "done";
    };
    const first = await recoverRuns({ repoRoot, toolName: "ends" }, body);
    expect(first).toMatchObject([{ slug, outcome: "resumed", result: { status: "paused", reason: "pause from outside" } }]);
    expect(ran).not.toContain("s1");
    expect(await recoverRuns({ repoRoot, toolName: "ends" }, body)).toEqual([]);
  }, 60_000);

  it("phasekit resume <id> withdraws it: the next resume runs on", async () => {
    const { repoRoot, slug, runDir } = await crashedWithPause("withdrawn");
    const r = cli(repoRoot, "resume", slug);
    expect(r.code, r.stderr).toBe(0);
    // Not "goes on": a crashed run goes on only when its owner runs it again.
    expect(r.stdout.trim()).toBe(`pause request withdrawn: run ${slug} is crashed; it continues, unpaused, when ends runs target ${slug} again`);
    expect(existsSync(controlFile(runDir, "pause"))).toBe(false);
    expect(await resume(repoRoot, slug)).toMatchObject({ event: "end", status: "completed" });
  }, 60_000);
});
