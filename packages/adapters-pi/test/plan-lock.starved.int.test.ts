import { describe, it, expect } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { acquirePlanLock } from "../src/lock/plan-lock.js";

const STALE_MS = 2_000;

/** Blocks this process's event loop, as a CPU-starved machine does: no timer, no I/O callback runs meanwhile. */
function starve(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until);
}

async function holder(runDir: string) {
  const r = await acquirePlanLock({ runDir, owner: { tool: "starved" }, staleMs: STALE_MS });
  if (!r.ok) throw r.error;
  return r.lock;
}

describe("plan lock: a holder whose event loop was starved past the stale time", () => {
  it("still holds the lock when nobody took it over: its overdue refresh lands and assertHeld passes", async () => {
    const runDir = mkdtempSync(path.join(tmpdir(), "phasekit-lock-starved-"));
    const lock = await holder(runDir);
    // The refresh timer (every stale / 2) cannot run: the last refresh is now older than the stale time.
    starve(STALE_MS + 300);
    await expect(lock.assertHeld()).resolves.toBeUndefined();
    expect(lock.signal.aborted).toBe(false);
    expect(await lock.release()).toEqual({ ok: true, released: true });
  }, 20_000);

  it("loses it (LOCK_LOST) when another process took it over while it was starved", async () => {
    const runDir = mkdtempSync(path.join(tmpdir(), "phasekit-lock-starved-"));
    const lock = await holder(runDir);
    // The contender runs while this process is blocked in execFileSync: it watches the unchanged heartbeat for
    // the stale time, takes the lock over, reports, and exits (its exit cleanup removes its own lock).
    const script = `
      const { acquirePlanLock } = await import(${JSON.stringify(new URL("../dist/lock/plan-lock.js", import.meta.url).href)});
      const r = await acquirePlanLock({ runDir: ${JSON.stringify(runDir)}, owner: { tool: "taker" }, staleMs: ${STALE_MS}, retries: 60 });
      process.stdout.write(JSON.stringify(r.ok ? { ok: true, from: r.lock.tookOverFrom?.token } : { ok: false, code: r.error.code }));`;
    const took = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" })) as unknown;
    expect(took).toEqual({ ok: true, from: lock.holder.token });
    await expect(lock.assertHeld()).rejects.toMatchObject({ code: "LOCK_LOST" });
    expect(lock.signal.reason).toMatchObject({ code: "LOCK_LOST" });
    expect(await lock.release()).toMatchObject({ ok: false, error: { code: "LOCK_NOT_OWNED" } });
  }, 30_000);
});
