/**
 * One liveness rule (lock/liveness.ts) for the lock, pause acceptance and `phasekit list`'s "crashed", against
 * real processes: a runner SIGKILLed a moment ago is dead by its pid although its lock looks fresh; a live runner
 * whose clock is 30 s behind (or ahead) is alive although its lock looks stale (or dated in the future); a crashed
 * holder whose lock time lies in the future does not block a contender until the clock passes it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { requestPause } from "../src/run/control-requests.js";
import { listRuns } from "../src/cli/run-view.js";
import { acquirePlanLock } from "../src/lock/plan-lock.js";
import { judgeLiveness } from "../src/lock/liveness.js";
import { spawnLockChild, type LockChild } from "./helpers/lock-children.js";

const dirs: string[] = [];
const children: LockChild[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) {
    c.proc.kill("SIGKILL");
    await c.exited;
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function repo(): string {
  const d = mkdtempSync(path.join(tmpdir(), "pk-liveness-"));
  dirs.push(d);
  return d;
}

/** A runner child that waits inside its first step (holding the lock), spawned with the given helper and args. */
async function runnerInStep(helper: string, args: string[]): Promise<LockChild> {
  const child = spawnLockChild(helper, args);
  children.push(child);
  await child.waitFor(/"event":"in"/);
  return child;
}

async function kill(child: LockChild): Promise<void> {
  child.proc.kill("SIGKILL");
  await child.exited;
}

async function pauseCode(repoRoot: string, slug: string): Promise<string> {
  try {
    await requestPause({ repoRoot, target: slug, reason: "liveness test" });
    return "accepted";
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

async function listed(repoRoot: string, slug: string): Promise<string | undefined> {
  return (await listRuns({ repoRoot }, Date.now())).find((r) => r.id === slug)?.status;
}

describe("one liveness rule: pause acceptance and list", () => {
  it("a runner SIGKILLed a moment ago (its lock still fresh) is dead: a pause is NOT_RUNNING and list says crashed", async () => {
    const repoRoot = repo();
    const child = await runnerInStep("run-controlled.mjs", [repoRoot, "killed", "in:1"]);
    await kill(child);
    // Well inside the 10 s stale time: only the holder's identity can tell it is gone.
    expect(await pauseCode(repoRoot, "killed")).toBe("NOT_RUNNING");
    expect(await listed(repoRoot, "killed")).toBe("crashed");
    expect(await judgeLiveness(path.join(repoRoot, "ai_plan", "killed"))).toMatchObject({ verdict: "dead", by: "pid" });
  }, 20_000);

  for (const skew of [-30_000, 30_000]) {
    it(`a live runner whose clock is ${Math.abs(skew / 1000)} s ${skew < 0 ? "behind" : "ahead"} is running: a pause is accepted and ends it paused`, async () => {
      const repoRoot = repo();
      const child = await runnerInStep("run-skewed.mjs", [repoRoot, "skewed", String(skew)]);
      expect(await listed(repoRoot, "skewed")).toBe("running");
      expect(await pauseCode(repoRoot, "skewed")).toBe("accepted");
      child.send("go");
      const end = JSON.parse(await child.waitFor(/"event":"(end|rejected)"/)) as { event: string; status?: string };
      expect(end).toMatchObject({ event: "end", status: "paused" });
    }, 20_000);
  }
});

describe("one liveness rule: the lock", () => {
  /**
   * A lock left by a crashed holder on another host (its pid means nothing here) whose clock ran an hour ahead:
   * its mtime and `since` lie in the future.
   */
  function plantFutureLock(runDir: string): void {
    const lockDir = path.join(runDir, ".lock");
    mkdirSync(lockDir);
    const token = "f".repeat(32);
    const future = new Date(Date.now() + 3_600_000);
    const record = { schemaVersion: 1, token, tool: "crashed", pid: 4242, host: "some-other-host", since: future.toISOString(), staleMs: 2_000 };
    writeFileSync(path.join(lockDir, `holder-${token}.json`), JSON.stringify(record));
    utimesSync(lockDir, future, future);
  }

  it("a runner on this host whose clock ran an hour ahead, SIGKILLed: dead by its pid whatever its lock's time (pause refused, list crashed, lock taken at once)", async () => {
    const repoRoot = repo();
    const runDir = path.join(repoRoot, "ai_plan", "ahead");
    const child = await runnerInStep("run-skewed.mjs", [repoRoot, "ahead", "3600000"]);
    const pid = child.proc.pid;
    await kill(child);
    expect(await judgeLiveness(runDir)).toMatchObject({ verdict: "dead", by: "pid" });
    expect(await pauseCode(repoRoot, "ahead")).toBe("NOT_RUNNING");
    expect(await listed(repoRoot, "ahead")).toBe("crashed");
    const r = await acquirePlanLock({ runDir, owner: { tool: "next" } });
    expect(r.ok ? r.lock.tookOverFrom : r.error.message).toMatchObject({ pid });
    if (r.ok) await r.lock.release();
  });

  it("a crashed holder that cannot be judged by pid, with its lock time in the future, is taken over once its heartbeat stayed still for the stale time", async () => {
    const runDir = repo();
    plantFutureLock(runDir);
    expect(await judgeLiveness(runDir)).toMatchObject({ verdict: "live", by: "unverified" });
    const r = await acquirePlanLock({ runDir, owner: { tool: "next" }, staleMs: 2_000, updateMs: 1_000 });
    expect(r.ok ? r.lock.tookOverFrom : r.error.message).toMatchObject({ host: "some-other-host" });
    if (r.ok) await r.lock.release();
  }, 20_000);

  it("a pause watches such a holder and refuses once its heartbeat stayed still (NOT_RUNNING), instead of trusting its future time", async () => {
    const repoRoot = repo();
    const child = await runnerInStep("run-controlled.mjs", [repoRoot, "remote", "in:1"]);
    await kill(child);
    const runDir = path.join(repoRoot, "ai_plan", "remote");
    rmSync(path.join(runDir, ".lock"), { recursive: true });
    plantFutureLock(runDir);
    expect(await listed(repoRoot, "remote")).toBe("running"); // one look cannot tell: list never waits
    expect(await pauseCode(repoRoot, "remote")).toBe("NOT_RUNNING");
  }, 20_000);
});
