import { describe, it, expect } from "vitest";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createFsPlanStore, METADATA_FILE } from "../src/store/plan-store.js";
import { finishRun, spawnLockChild, type LockChild } from "./helpers/lock-children.js";

interface Report {
  event: string;
  code?: string;
  hook?: string;
  status?: string;
  result?: string | null;
  message?: string;
}

const parse = (line: string): Report => JSON.parse(line) as Report;

const finish = (child: LockChild): Promise<Report> => finishRun<Report>(child);

/**
 * The first runner is SIGSTOPped (between steps, or inside a step) past the 2 s stale time; a second process
 * takes the run over and completes it; the first is continued and told to go on.
 */
async function lostLock(mode: "between" | "in"): Promise<void> {
  const repoRoot = mkdtempSync(path.join(tmpdir(), `phasekit-run-lost-${mode}-`));
  const slug = "lost";
  const runDir = path.join(repoRoot, "ai_plan", slug);
  const sleeper = spawnLockChild("run-sleeper.mjs", [repoRoot, slug, mode]);
  try {
    await sleeper.next(mode === "in" ? /"event":"in"/ : /"event":"between"/, true);
    sleeper.proc.kill("SIGSTOP");
    // proper-lockfile may date the lock's mtime up to ~1 s ahead, and a taker with retries 0 only watches a lock
    // that looks older than the stale time (2 s): sleep past both so the taker never gives up with LOCKED.
    await sleep(3_600);
    const taker = spawnLockChild("run-sleeper.mjs", [repoRoot, slug, "free"]);
    const took = await finish(taker);
    expect(took, JSON.stringify(took)).toMatchObject({ event: "end", status: "completed", result: `seed+0+1@${taker.proc.pid}+2+3` });
    const completed = readFileSync(path.join(runDir, METADATA_FILE), "utf8");
    expect(JSON.parse(completed)).toMatchObject({ status: "completed", lastCompletedStepId: "s3" });

    sleeper.proc.kill("SIGCONT");
    // Its lock refresh runs first after the wake-up, as it would in a real run that overslept.
    expect(parse(await sleeper.next(/"event":"aborted"/, true))).toMatchObject({ code: "LOCK_LOST" });
    sleeper.send("go");
    const end = await finish(sleeper);
    expect(end.event, JSON.stringify(end)).toBe("rejected");
    expect(["LOCK_LOST", "STALE_GENERATION"]).toContain(end.code);
    // It does not release the new holder's lock (refused, reported as a hook failure, not a crash).
    expect(sleeper.lines.map(parse)).toContainEqual({ event: "hook-failure", hook: "lockRelease", code: "LOCK_NOT_OWNED" });
    expect(sleeper.lines.map(parse).some((r) => r.event === "end")).toBe(false);

    // workflow.json is byte for byte the taker's completed state, not overwritten with failed.
    expect(readFileSync(path.join(runDir, METADATA_FILE), "utf8")).toBe(completed);
    // And the checkpoint the taker completed is still the one a later resume reuses.
    const store = createFsPlanStore({ repoRoot });
    try {
      const held = await store.lock(slug, { owner: { tool: "check" } });
      if (!held.ok) throw held.error;
      const s1 = await (await store.checkpoints(slug, { now: () => new Date() })).step("s1", { i: 1, prev: "seed+0" }, () => "re-ran");
      await held.lock.release();
      expect(s1).toMatchObject({ reused: true, output: `seed+0+1@${taker.proc.pid}` });
    } finally {
      await store.close();
    }
  } finally {
    sleeper.proc.kill("SIGCONT");
    sleeper.proc.kill("SIGKILL");
    sleeper.end();
  }
}

describe("runWorkflow: a runner paused past the stale time loses the run", () => {
  it("stopped between steps: its next ctx.step throws LOCK_LOST and the taker's completed state stays", () => lostLock("between"), 60_000);
  it("stopped inside a step: it finishes the step but writes nothing over the taker's run", () => lostLock("in"), 60_000);
});
