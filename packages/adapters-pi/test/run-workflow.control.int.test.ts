import { describe, it, expect } from "vitest";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { controlFile } from "../src/store/control-signals.js";
import { createFsPlanStore, METADATA_FILE } from "../src/store/plan-store.js";
import { analyzeResumeTarget } from "../src/run/resume-analysis.js";
import { readRunSteps } from "../src/store/run-steps.js";
import { readWorkflowMetadata } from "../src/store/metadata.js";
import { finishRun, spawnLockChild, type LockChild } from "./helpers/lock-children.js";

interface Report {
  event: string;
  stepId?: string;
  status?: string;
  reason?: string | null;
  result?: string | null;
  steps?: Array<{ stepId: string; outcome: string }>;
  signal?: string;
  pid?: number;
  code?: string;
  message?: string;
}

const parse = (line: string): Report => JSON.parse(line) as Report;
const ran = (child: LockChild): string[] => child.lines.map(parse).filter((r) => r.event === "ran").map((r) => r.stepId ?? "");

function setup(name: string): { repoRoot: string; slug: string; runDir: string } {
  const repoRoot = mkdtempSync(path.join(tmpdir(), `phasekit-run-control-${name}-`));
  return { repoRoot, slug: name, runDir: path.join(repoRoot, "ai_plan", name) };
}

/** Runs the requester child (a third process) and returns what it wrote. */
async function request(repoRoot: string, slug: string, signal: "pause" | "stop", reason: string): Promise<Report> {
  const child = spawnLockChild("run-request.mjs", [repoRoot, slug, signal, reason]);
  child.end();
  const exit = await child.exited;
  expect(exit, exit.stderr).toMatchObject({ code: 0, signal: null });
  return parse(child.lines[0] ?? "{}");
}

const finish = (child: LockChild): Promise<Report> => finishRun<Report>(child);

async function metadataOf(runDir: string) {
  const r = await readWorkflowMetadata(path.join(runDir, METADATA_FILE));
  if (!r.ok || r.metadata === null) throw new Error(`no readable workflow.json in ${runDir}`);
  return r.metadata;
}

describe("runWorkflow: pause and stop requested by another process", () => {
  it("a pause seen between steps ends the run paused before the next step; a resume reuses the done steps", async () => {
    const { repoRoot, slug, runDir } = setup("pause");
    const runner = spawnLockChild("run-controlled.mjs", [repoRoot, slug, "between"]);
    await runner.next(/"event":"between","stepId":"s0"/, true);
    runner.send("next");
    await runner.next(/"event":"between","stepId":"s1"/, true);
    const asked = await request(repoRoot, slug, "pause", "user asked for a break");
    expect(asked).toMatchObject({ signal: "pause", reason: "user asked for a break" });
    expect(asked.pid).not.toBe(runner.proc.pid);
    expect(existsSync(controlFile(runDir, "pause"))).toBe(true);
    runner.send("next");
    const end = await finish(runner);
    expect(end).toMatchObject({ event: "end", status: "paused", reason: "user asked for a break" });
    expect(ran(runner)).toEqual(["s0", "s1"]);

    // Durably paused and resumable; the request was consumed.
    expect(await metadataOf(runDir)).toMatchObject({ status: "paused", lastCompletedStepId: "s1" });
    expect(existsSync(controlFile(runDir, "pause"))).toBe(false);
    expect(await journalEvents(repoRoot, slug)).toContain("paused");
    const analysis = await analyzeResumeTarget({ repoRoot, target: slug, invokedTool: "controlled" });
    expect(analysis).toMatchObject({ kind: "resumable", status: "paused", lastCompletedStepId: "s1" });

    const resumed = spawnLockChild("run-controlled.mjs", [repoRoot, slug, "free"]);
    const done = await finish(resumed);
    expect(done).toMatchObject({ event: "end", status: "completed", result: "seed+0+1+2+3+4+5" });
    expect(done.steps?.map((s) => `${s.stepId}:${s.outcome}`)).toEqual(["s0:reused", "s1:reused", "s2:ran", "s3:ran", "s4:ran", "s5:ran"]);
    expect(ran(resumed)).toEqual(["s2", "s3", "s4", "s5"]);
    expect(await metadataOf(runDir)).toMatchObject({ status: "completed" });
  }, 60_000);

  it("a stop sent while a step runs lets that step finish, runs no further step, and ends cancelled with the reason", async () => {
    const { repoRoot, slug, runDir } = setup("stop");
    const runner = spawnLockChild("run-controlled.mjs", [repoRoot, slug, "in:2"]);
    await runner.next(/"event":"in","stepId":"s2"/, true);
    expect(await request(repoRoot, slug, "stop", "no longer needed")).toMatchObject({ signal: "stop" });
    // A later pause never downgrades a pending stop: it has its own file, and the runner reads the stop first.
    expect(await request(repoRoot, slug, "pause", "too late")).toMatchObject({ signal: "pause", reason: "too late" });
    runner.send("next");
    const end = await finish(runner);
    expect(end).toMatchObject({ event: "end", status: "cancelled", reason: "no longer needed" });
    expect(ran(runner)).toEqual(["s0", "s1", "s2"]);

    expect(await metadataOf(runDir)).toMatchObject({ status: "cancelled", failureReason: "no longer needed", lastCompletedStepId: "s2" });
    expect(existsSync(controlFile(runDir, "stop"))).toBe(false);
    expect(existsSync(controlFile(runDir, "pause"))).toBe(false);
    expect(await journalEvents(repoRoot, slug)).toContain("stopped");
    const records = await readRunSteps(runDir);
    expect(records.map((r) => `${r.stepId}:${r.status}`).sort()).toEqual(["s0:completed", "s1:completed", "s2:completed"]);
  }, 60_000);
});

// The journal as every reader sees it: rendered from the run's history.
async function journalEvents(repoRoot: string, slug: string): Promise<string[]> {
  const store = createFsPlanStore({ repoRoot });
  try {
    const j = await store.readJournal(slug);
    if (!j.ok) throw j.error;
    return j.entries.map((e) => e.event);
  } finally {
    await store.close();
  }
}
