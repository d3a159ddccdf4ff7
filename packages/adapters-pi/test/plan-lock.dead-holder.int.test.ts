import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { acquirePlanLock } from "../src/lock/plan-lock.js";

const HOLDER = fileURLToPath(new URL("./helpers/lock-idle-holder.mjs", import.meta.url));
const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL");
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Starts a child that holds the lock of `runDir` (stale time 60 s) and resolves once it holds it. */
async function holder(runDir: string, host?: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [HOLDER, runDir, ...(host ? [host] : [])], { stdio: ["ignore", "pipe", "inherit"] });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once("data", () => resolve());
    child.once("exit", (code) => reject(new Error(`holder exited ${code}`)));
  });
  return child;
}
async function killed(child: ChildProcess): Promise<void> {
  const gone = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await gone;
}
function runDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), "pk-dead-"));
  dirs.push(d);
  return d;
}

describe("plan lock: a holder known to be dead", () => {
  it("is taken over at once when it ran on this host and its pid is gone (no wait for the 60 s stale time)", async () => {
    const dir = runDir();
    const child = await holder(dir);
    const pid = child.pid;
    await killed(child);
    const started = Date.now();
    const r = await acquirePlanLock({ runDir: dir, owner: { tool: "resumer" } });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.lock.tookOverFrom).toMatchObject({ tool: "idle", pid });
    expect(Date.now() - started).toBeLessThan(30_000); // far below the holder's 60 s stale time
    await r.lock.release();
  });

  it("is not taken over while the holder process lives", async () => {
    const dir = runDir();
    await holder(dir);
    const r = await acquirePlanLock({ runDir: dir, owner: { tool: "contender" } });
    expect(!r.ok && r.error.code).toBe("LOCKED");
  });

  it("is not judged when it ran on another host: its pid means nothing here", async () => {
    const dir = runDir();
    const child = await holder(dir, "some-other-host");
    await killed(child);
    const r = await acquirePlanLock({ runDir: dir, owner: { tool: "contender" } });
    expect(!r.ok && r.error.code).toBe("LOCKED");
  });
});
