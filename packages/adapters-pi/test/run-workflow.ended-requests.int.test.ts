/**
 * The requests a run's end leaves, with real processes (docs/run-workflow.md, "Control signals"): a pause is for
 * a running run only, so a pause filed during a run that then ends failed ends with that run, and its next
 * resume is not paused by it; a stop filed during it stays (a stop is accepted for a failed run: its next resume
 * ends cancelled). A pause whose filer read the run running before the end and wrote after it (stamped with an
 * earlier generation) is superseded at the next resume, as for a run that ended completed.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { controlFile, newControlRequest, writeControlRequest } from "../src/store/control-signals.js";
import { METADATA_FILE } from "../src/store/plan-store.js";
import { readWorkflowMetadata } from "../src/store/metadata.js";
import { finishRun, spawnLockChild } from "./helpers/lock-children.js";

interface Report {
  event: string;
  status?: string;
  reason?: string | null;
  code?: string | null;
  message?: string;
  signal?: string;
}

function setup(name: string): { repoRoot: string; slug: string; runDir: string } {
  const repoRoot = mkdtempSync(path.join(tmpdir(), `phasekit-ended-requests-${name}-`));
  return { repoRoot, slug: name, runDir: path.join(repoRoot, "ai_plan", name) };
}

/** Files `signal` for the run from a third process (phasekit pause/stop's library call). */
async function request(repoRoot: string, slug: string, signal: "pause" | "stop"): Promise<Report> {
  const child = spawnLockChild("run-request.mjs", [repoRoot, slug, signal, `${signal} from outside`]);
  child.end();
  const exit = await child.exited;
  expect(exit, exit.stderr).toMatchObject({ code: 0, signal: null });
  return JSON.parse(child.lines[0] ?? "{}") as Report;
}

async function metadataOf(runDir: string) {
  const r = await readWorkflowMetadata(path.join(runDir, METADATA_FILE));
  if (!r.ok || r.metadata === null) throw new Error(`no readable workflow.json in ${runDir}`);
  return r.metadata;
}

/** Runs s0..s2 in a child that fails inside s1 after `during` ran (the run is live then). */
async function failWhile(repoRoot: string, slug: string, during: () => Promise<void>): Promise<void> {
  const runner = spawnLockChild("run-ends-failed.mjs", [repoRoot, slug, "fail"]);
  await runner.next(/"event":"in"/, true);
  await during();
  runner.send("next");
  expect(await finishRun<Report>(runner)).toMatchObject({ event: "rejected", message: expect.stringContaining("s1 broke") });
}

const resume = (repoRoot: string, slug: string): Promise<Report> => finishRun<Report>(spawnLockChild("run-ends-failed.mjs", [repoRoot, slug, "free"]));

describe("runWorkflow: the requests a failed end leaves", () => {
  it("a pause filed during the run ends with it: the file is gone and the next resume completes", async () => {
    const { repoRoot, slug, runDir } = setup("pause");
    await failWhile(repoRoot, slug, async () => {
      expect(await request(repoRoot, slug, "pause")).toMatchObject({ signal: "pause" });
    });
    expect(await metadataOf(runDir)).toMatchObject({ status: "failed" });
    expect(existsSync(controlFile(runDir, "pause"))).toBe(false);
    expect(await resume(repoRoot, slug)).toMatchObject({ event: "end", status: "completed" });
  }, 60_000);

  it("a stop filed during the run stays: the next resume ends cancelled with its reason", async () => {
    const { repoRoot, slug, runDir } = setup("stop");
    await failWhile(repoRoot, slug, async () => {
      expect(await request(repoRoot, slug, "stop")).toMatchObject({ signal: "stop" });
    });
    expect(await metadataOf(runDir)).toMatchObject({ status: "failed" });
    expect(existsSync(controlFile(runDir, "stop"))).toBe(true);
    expect(await resume(repoRoot, slug)).toMatchObject({ event: "end", status: "cancelled", reason: "stop from outside" });
    expect(existsSync(controlFile(runDir, "stop"))).toBe(false);
  }, 60_000);

  it("a pause stamped before the failed end and written after it is superseded at the next resume", async () => {
    const { repoRoot, slug, runDir } = setup("late");
    let seen = 0;
    await failWhile(repoRoot, slug, async () => {
      seen = (await metadataOf(runDir)).generation;
    });
    const ended = await metadataOf(runDir);
    expect(ended).toMatchObject({ status: "failed" });
    expect(ended.generation).toBeGreaterThan(seen);
    // The filer read the run running at `seen` (so the pause was accepted) and its write landed after the end.
    await writeControlRequest(runDir, newControlRequest("pause", "late pause", undefined, seen));
    expect(await resume(repoRoot, slug)).toMatchObject({ event: "end", status: "completed" });
    expect(existsSync(controlFile(runDir, "pause"))).toBe(false);
  }, 60_000);
});
