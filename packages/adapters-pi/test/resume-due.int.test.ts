/**
 * Issue 21: `phasekit resume-due` with real processes. A run killed while it sleeps is listed once its sleep is
 * over (not before), `--exec` runs a command for it with PHASEKIT_RUN_ID; a run killed while it waits for an
 * approval (no timeout) is listed only once a decision is filed. A run held by a live process is never listed.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { spawnLockChild, type LockChild } from "./helpers/lock-children.js";
import { phasekit } from "./cli/helpers/run-cli.js";
import { readRunLog } from "../src/store/run-log/reader.js";

const SLUG = "waits";
const temps: string[] = [];
const children: LockChild[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.proc.exitCode === null) c.proc.kill("SIGKILL");
  temps.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
});

function repo(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "pk-due-"));
  temps.push(dir);
  return dir;
}

async function killedWhileWaiting(root: string, ...args: string[]): Promise<void> {
  const child = spawnLockChild("run-waiter.mjs", [root, SLUG, ...args]);
  children.push(child);
  await child.waitFor(/"event":"waiting"/);
  child.proc.kill("SIGKILL");
  await child.exited;
}

const due = (root: string) => {
  const r = phasekit(["--repo", root, "--json", "resume-due"]);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { due: Array<{ id: string; wait: string; why: string }> }).due;
};

/** Polls until `fn` holds (an event: the wait's deadline passing), never asserting how long it took. */
async function until(fn: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (fn()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never: ${what}`);
}

describe("phasekit resume-due", () => {
  it("lists a killed run once its sleep is over, and --exec runs a command for it", async () => {
    const root = repo();
    await killedWhileWaiting(root, "sleep", "1500");
    const early = due(root);
    // Listed only once due: if the check above ran after the deadline already, it lists it (both are right).
    if (early.length > 0) expect(early[0]).toMatchObject({ id: SLUG, wait: "sleep", why: "its sleep is over" });
    await until(() => due(root).length === 1, "the sleep becomes due");
    expect(due(root)[0]).toMatchObject({ id: SLUG, wait: "sleep", why: "its sleep is over" });
    const out = path.join(root, "resumed.txt");
    const r = phasekit(["--repo", root, "resume-due", "--exec", `node -e "require('fs').writeFileSync(process.argv[1], process.env.PHASEKIT_RUN_ID)" ${JSON.stringify(out)}`]);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(out, "utf8")).toBe(SLUG);
    expect(r.stdout).toContain(`${SLUG}  sleep  its sleep is over`);
  });

  it("a resumed sleep that asks another length is due when that length says (the wait and resume-due agree)", async () => {
    const root = repo();
    await killedWhileWaiting(root, "sleep", "1500");
    await until(() => due(root).length === 1, "the 1.5 s sleep becomes due");
    // Resumed with a 10-minute sleep (counted from the recorded start, as the wait does), killed once it began.
    const resumed = spawnLockChild("run-waiter.mjs", [root, SLUG, "sleep", "600000"]);
    children.push(resumed);
    await resumed.waitFor(/"event":"waiting"/);
    const history = () => readRunLog(path.join(root, "ai_plan", SLUG)).then((v) => {
      const keys = v?.entries().map((e) => e.key) ?? [];
      v?.close();
      return keys;
    });
    for (let i = 0; i < 400 && !(await history()).includes("phasekit:sleep-due#1"); i++) await new Promise((r) => setTimeout(r, 50));
    resumed.proc.kill("SIGKILL");
    await resumed.exited;
    // Before, resume-due still read the first length and listed the run as due although its wait was not.
    expect(due(root)).toEqual([]);
  });

  it("lists an approval wait with no timeout only once a decision is filed", async () => {
    const root = repo();
    await killedWhileWaiting(root, "approval");
    expect(due(root)).toEqual([]);
    const filed = phasekit(["--repo", root, "approve", SLUG, "--name", "ship", "--data", '{"channel":"beta"}']);
    expect(filed.code, filed.stderr).toBe(0);
    expect(due(root)).toEqual([{ id: SLUG, wait: "approval:ship", dueAt: null, why: "a decision was filed" }]);
  });

  it("--exec: a command that fails makes resume-due exit 1 naming that run, after running the others' commands", async () => {
    const root = repo();
    for (const slug of ["a", "b"]) {
      const child = spawnLockChild("run-waiter.mjs", [root, slug, "approval"]);
      children.push(child);
      await child.waitFor(/"event":"waiting"/);
      child.proc.kill("SIGKILL");
      await child.exited;
      expect(phasekit(["--repo", root, "approve", slug, "--name", "ship", "--data", '{"channel":"beta"}']).code).toBe(0);
    }
    const seen = path.join(root, "seen.txt");
    const exec = `echo "$PHASEKIT_RUN_ID" >> ${JSON.stringify(seen)}; [ "$PHASEKIT_RUN_ID" != b ] || exit 3`;
    const r = phasekit(["--repo", root, "resume-due", "--exec", exec]);
    expect(r.code).toBe(1);
    expect(readFileSync(seen, "utf8").split("\n").filter(Boolean).sort()).toEqual(["a", "b"]);
    expect(r.stderr).toContain("run b (approval:ship: exited 3)");
    expect(r.stderr).not.toContain("run a ");
    const j = phasekit(["--repo", root, "--json", "resume-due", "--exec", "exit 3"]);
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout)).toMatchObject({ ran: [{ exitCode: 3 }, { exitCode: 3 }] });
    expect(JSON.parse(j.stderr)).toMatchObject({ schema: "phasekit.error/1", exitCode: 1, error: { code: "EXEC_FAILED", details: { failed: [{ why: "exited 3" }, { why: "exited 3" }] } } });
  });

  it("never lists a run a live process holds", async () => {
    const root = repo();
    const child = spawnLockChild("run-waiter.mjs", [root, SLUG, "sleep", "1"]);
    children.push(child);
    const live = spawnLockChild("run-waiter.mjs", [root, "other", "approval"]);
    children.push(live);
    await live.waitFor(/"event":"waiting"/);
    phasekit(["--repo", root, "approve", "other", "--name", "ship", "--data", '{"channel":"beta"}']);
    await child.waitFor(/"event":"end"/);
    // "other" may have taken the decision already or not: either way it is held by its live process, not listed.
    expect(due(root).map((d) => d.id)).not.toContain("other");
  });
});
