/**
 * Issue 21 with real processes: `ctx.waitForApproval` and `ctx.sleep` survive a SIGKILL and a resume (the resumed
 * run continues the same wait; the approval is filed by another process, `phasekit approve`, while nobody or the
 * resumed run waits), a payload the schema refuses is reported and waited past, a timeout is an outcome, and
 * `ctx.budget` keeps counting across resumes (a budget reached pauses the run; a raised one lets it go on).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { spawnLockChild, type LockChild } from "./helpers/lock-children.js";
import { phasekit } from "./cli/helpers/run-cli.js";

const SLUG = "waits";
const temps: string[] = [];
const children: LockChild[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.proc.exitCode === null) c.proc.kill("SIGKILL");
  temps.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
});

function repo(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "pk-waits-"));
  temps.push(dir);
  return dir;
}

function waiter(repoRoot: string, ...args: string[]): LockChild {
  const child = spawnLockChild("run-waiter.mjs", [repoRoot, SLUG, ...args]);
  children.push(child);
  return child;
}

async function kill(child: LockChild): Promise<void> {
  child.proc.kill("SIGKILL");
  const exit = await child.exited;
  expect(exit.signal).toBe("SIGKILL");
}

async function end(child: LockChild): Promise<{ status: string; result: { outcome: unknown; used: number; tokens: number } | null; reason: string | null }> {
  const line = await child.waitFor(/"event":"(end|rejected)"/);
  const doc = JSON.parse(line) as { event: string; status: string; result: { outcome: unknown; used: number; tokens: number } | null; reason: string | null; message?: string };
  expect(doc.event, doc.message).toBe("end");
  return doc;
}

const approve = (repoRoot: string, ...args: string[]) => phasekit(["--repo", repoRoot, "approve", SLUG, ...args]);

describe("durable waits across SIGKILL", () => {
  it("an approval wait: killed while waiting, approved from another process with nobody running, resumed: takes the payload", async () => {
    const root = repo();
    const first = waiter(root, "approval");
    await first.waitFor(/"event":"waiting"/);
    await kill(first);
    // Nobody runs the run now: the decision waits in the store for it.
    const filed = approve(root, "--name", "ship", "--data", '{"channel":"beta"}', "looks", "good");
    expect(filed.code, filed.stderr).toBe(0);
    const second = waiter(root, "approval");
    const done = await end(second);
    expect(done.status).toBe("completed");
    expect(done.result?.outcome).toEqual({ status: "approved", data: { channel: "beta" } });
    // Budgets counted across the resume: the replayed first spend (1 turn, 100 tokens) plus the last one.
    expect(done.result?.used).toBe(2);
    expect(done.result?.tokens).toBe(100);
    const journal = phasekit(["--repo", root, "journal", SLUG]);
    // The journal says the wait in words, then the decision that ended it.
    expect(journal.stdout).toMatch(/waits for approval ship: Ship it\?[\s\S]*approval ship: approved/);
  });

  it("a payload the schema refuses is reported and the run keeps waiting; a rejection is an outcome", async () => {
    const root = repo();
    const run = waiter(root, "approval");
    await run.waitFor(/"event":"waiting"/);
    expect(approve(root, "--data", '{"channel":"nightly"}').code).toBe(0);
    expect(approve(root, "--reject", "not", "today").code, "a second decision replaces the refused one or follows it").toBe(0);
    const done = await end(run);
    expect(done.result?.outcome).toEqual({ status: "rejected", reason: "not today" });
  });

  it("a timeout is a typed outcome, counted from the wait's first start across a SIGKILL", async () => {
    const root = repo();
    const first = waiter(root, "approval", "1500");
    await first.waitFor(/"event":"waiting"/);
    await kill(first);
    const second = waiter(root, "approval", "1500");
    const done = await end(second);
    expect(done.result?.outcome).toMatchObject({ status: "timed-out" });
  });

  it("a sleep killed midway is continued by the resumed run, not started over", async () => {
    const root = repo();
    const first = waiter(root, "sleep", "60000");
    const before = JSON.parse(await first.waitFor(/"event":"waiting"/)) as { start: unknown };
    await kill(first);
    // The resumed body continues the recorded wait: the start entry is the one the killed run wrote (same record,
    // not a new attempt), so the sleep ends at that start + the length asked for.
    const second = waiter(root, "sleep", "1200");
    const after = JSON.parse(await second.waitFor(/"event":"waiting"/)) as { start: unknown };
    expect(after.start).toEqual(before.start);
    const done = await end(second);
    expect(done.status).toBe("completed");
  });
});

describe("budgets across resumes", () => {
  it("a turn budget reached pauses the run with the reason; a resume with a raised budget goes on from the count", async () => {
    const root = repo();
    const first = waiter(root, "sleep", "1", "1");
    const paused = await end(first);
    expect(paused.status).toBe("paused");
    expect(paused.reason).toContain("budget of 1 turns is used up (1 used)");
    const second = waiter(root, "sleep", "1", "5");
    const done = await end(second);
    expect(done.status).toBe("completed");
    expect(done.result?.used).toBe(2);
  });
});
