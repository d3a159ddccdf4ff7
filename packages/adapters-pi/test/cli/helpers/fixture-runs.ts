/**
 * A repository holding one run of each kind the CLI must show: completed, old and completed, paused inside a
 * core workflow (with a sub-workflow), crashed (its runner SIGKILLed mid-step) and live (its runner waits
 * mid-step, holding the lock). Built once per test file; `close()` ends the live child and removes everything.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createReporter, requestPause, runWorkflow } from "@phasekit/adapters-pi";
import { loadDefinitionFolders } from "../../../src/definitions/folders.js";
import { spawnLines, type LineChild } from "../../helpers/spawn-child.js";

/** The definition folders of the fixtures (pi-workflows format). */
export const DEFS = fileURLToPath(new URL("../fixtures/workflows", import.meta.url));
/** Definition folders with problems. */
export const BROKEN_DEFS = fileURLToPath(new URL("../fixtures/broken", import.meta.url));
const LIVE_CHILD = fileURLToPath(new URL("./live-run.mjs", import.meta.url));

/** The fixture repository. */
export interface FixtureRepo {
  repo: string;
  live: LineChild;
  close(): Promise<void>;
}

const quiet = () => createReporter({ onChange: () => undefined });

/** Builds the fixture repository (about a second: two children start and reach their step). */
export async function fixtureRepo(): Promise<FixtureRepo> {
  const repo = mkdtempSync(path.join(tmpdir(), "pk-cli-fx-"));
  const DAY = 86_400_000;
  await runWorkflow({ repoRoot: repo, target: "done", toolName: "builder", createReporter: quiet }, async (ctx) => {
    await ctx.step("fetch", { url: "x" }, () => ({ bytes: 3 }));
    return ctx.step("build", { from: "fetch" }, () => "built");
  });
  await runWorkflow({ repoRoot: repo, target: "old", toolName: "builder", createReporter: quiet, clock: () => new Date(Date.now() - 40 * DAY) }, async (ctx) =>
    ctx.step("only", {}, () => 1),
  );
  const registry = loadDefinitionFolders([DEFS]).registry;
  await runWorkflow(
    { repoRoot: repo, target: "shipping", toolName: "ship-bot", createReporter: quiet, workflow: { registry, workflowKey: "ship", taskDescription: "fix the bug" } },
    async (ctx) => {
      await ctx.step("plan", { task: "fix the bug" }, () => "the plan");
      await ctx.workflow?.dispatch({ type: "advance" });
      await requestPause({ repoRoot: repo, target: "shipping", reason: "coffee" });
      return ctx.step("test", {}, () => "never");
    },
  );
  // One after the other, so that `live` is always the newest run (list order is part of the docs' transcripts).
  const crashed = spawnLines(process.execPath, [LIVE_CHILD, repo, "crashed"]);
  await crashed.waitFor(/"in"/);
  crashed.proc.kill("SIGKILL");
  await crashed.exited;
  const live = spawnLines(process.execPath, [LIVE_CHILD, repo, "live"]);
  await live.waitFor(/"in"/);
  return {
    repo,
    live,
    async close() {
      live.proc.kill("SIGKILL");
      await live.exited;
      rmSync(repo, { recursive: true, force: true });
    },
  };
}
