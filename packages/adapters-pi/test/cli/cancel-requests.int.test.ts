/**
 * `phasekit cancel` of a run nobody runs ends it through runWorkflow's end (run/run-end.ts `endRun`), so the
 * stop left pending for it goes with it: a stop is accepted for a paused or crashed run (its next resume would
 * end cancelled), and once the cancel has ended the run there is nothing left for it to do. Before, the
 * stop stayed, and `phasekit show` listed it as pending for a cancelled run. Through the real bin.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReporter, requestPause, requestStop, runWorkflow } from "@phasekit/adapters-pi";
import { controlFile } from "../../src/store/control-signals.js";
import { spawnLines } from "../helpers/spawn-child.js";
import { json, phasekit } from "./helpers/run-cli.js";

const LIVE_CHILD = fileURLToPath(new URL("./helpers/live-run.mjs", import.meta.url));
const quiet = () => createReporter({ onChange: () => undefined });

let repo: string;
beforeAll(async () => {
  repo = mkdtempSync(path.join(tmpdir(), "pk-cancel-requests-"));
  const paused = await runWorkflow({ repoRoot: repo, target: "paused", toolName: "bot", createReporter: quiet }, async (ctx) => {
    await ctx.step("a", {}, () => 1);
    await requestPause({ repoRoot: repo, target: "paused", reason: "coffee" });
    return ctx.step("b", {}, () => 2);
  });
  expect(paused.status).toBe("paused");
  // A body that throws ends the run failed, and runWorkflow throws its error.
  await expect(
    runWorkflow({ repoRoot: repo, target: "failed", toolName: "bot", createReporter: quiet }, async (ctx) => {
      await ctx.step("a", {}, () => 1);
      throw new Error("flaky upstream");
    }),
  ).rejects.toThrow("flaky upstream");
  const crashed = spawnLines(process.execPath, [LIVE_CHILD, repo, "crashed"]);
  await crashed.waitFor(/"in"/);
  crashed.proc.kill("SIGKILL");
  await crashed.exited;
}, 60_000);
afterAll(() => rmSync(repo, { recursive: true, force: true }));

const cli = (...args: string[]) => phasekit([...args, "--repo", repo]);

describe("phasekit cancel clears the stop left for the run it ends", () => {
  // A failed run is not over (its owner resumes it by running its target again): a stop is accepted for it, and
  // cancel ends it as it ends a paused one. Before, cancel refused it ("already failed") while stop took it.
  it.each(["paused", "crashed", "failed"])("a %s run with a stop filed", async (slug) => {
    await requestStop({ repoRoot: repo, target: slug, reason: "not needed" });
    const runDir = path.join(repo, "ai_plan", slug);
    expect(existsSync(controlFile(runDir, "stop"))).toBe(true);

    const c = cli("cancel", slug, "done", "with", "it", "--json");
    expect(c.code, c.stderr).toBe(0);
    expect(json<{ action: string }>(c.stdout, "phasekit.control/1")).toMatchObject({ action: "cancel" });

    expect(existsSync(controlFile(runDir, "stop"))).toBe(false);
    const show = cli("show", slug, "--json", "--fields", "summary,pending");
    expect(show.code, show.stderr).toBe(0);
    expect(JSON.parse(show.stdout)).toMatchObject({ summary: { status: "cancelled" }, pending: null });
  });
});

describe("phasekit resume of a failed run", () => {
  it("says how its owner continues it, not that there is nothing to resume", async () => {
    await expect(
      runWorkflow({ repoRoot: repo, target: "failed-again", toolName: "bot", createReporter: quiet }, async () => {
        throw new Error("flaky upstream");
      }),
    ).rejects.toThrow("flaky upstream");
    const r = cli("resume", "failed-again");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("run failed-again is failed; it continues when bot runs target failed-again again");
    const again = await runWorkflow({ repoRoot: repo, target: "failed-again", toolName: "bot", createReporter: quiet }, async () => "fine now");
    expect(again.status).toBe("completed");
  });
});
