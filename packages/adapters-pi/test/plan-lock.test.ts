import { performance } from "node:perf_hooks";
import { describe, it, expect } from "vitest";
import { mkdtempSync, mkdirSync, writeFileSync, utimesSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { isWorkflowError } from "@phasekit/core";
import { abandonPlanLock, acquirePlanLock } from "../src/lock/plan-lock.js";
import { readLockHolder, describeHolder } from "../src/lock/holder.js";

const fresh = () => mkdtempSync(path.join(tmpdir(), "phasekit-lock-"));

async function held(runDir: string, tool = "t") {
  const r = await acquirePlanLock({ runDir, owner: { tool, host: "h1", pid: 42 }, now: () => new Date("2026-05-06T07:08:09.000Z") });
  if (!r.ok) throw r.error;
  return r.lock;
}

describe("acquirePlanLock", () => {
  it("records the holder and reports a second acquisition as LOCKED naming it", async () => {
    const runDir = fresh();
    const lock = await held(runDir, "first");
    expect(lock.holder).toMatchObject({ tool: "first", pid: 42, host: "h1", since: "2026-05-06T07:08:09.000Z" });
    expect(await readLockHolder(runDir)).toMatchObject({ held: true, stale: false, holder: lock.holder });
    const second = await acquirePlanLock({ runDir, owner: { tool: "second" }, retries: 2 });
    expect(second.ok).toBe(false);
    if (!second.ok) {
      expect(second.error.code).toBe("LOCKED");
      expect(second.error.message).toContain(describeHolder(lock.holder));
      expect(second.error.details).toMatchObject({ file: path.join(runDir, ".lock"), value: lock.holder });
    }
    await lock.assertHeld();
    expect(await lock.release()).toEqual({ ok: true, released: true });
    expect(await lock.release()).toEqual({ ok: true, released: false });
    await expect(lock.assertHeld()).rejects.toMatchObject({ code: "LOCK_LOST" });
    expect(readdirSync(runDir)).toEqual([]);
  });

  // That its heartbeat stops (another process takes the run once it goes stale) is the PlanStore contract's case.
  it("an abandoned lock (its store closed) stays in place, and its holder's later release still removes it", async () => {
    const runDir = fresh();
    const lock = await held(runDir);
    await abandonPlanLock(lock);
    // Left in place: a contender is LOCKED until it has watched the lock go stale.
    expect(await readLockHolder(runDir)).toMatchObject({ held: true, holder: lock.holder });
    expect(await lock.release()).toEqual({ ok: true, released: true });
    expect(readdirSync(runDir)).toEqual([]);
    const next = await acquirePlanLock({ runDir, owner: { tool: "next" } });
    expect(next.ok).toBe(true);
    if (next.ok) await next.lock.release();
  });

  it("waits for a released lock when given retries", async () => {
    const runDir = fresh();
    const lock = await held(runDir);
    setTimeout(() => void lock.release(), 100);
    const next = await acquirePlanLock({ runDir, owner: { tool: "waiter" }, retries: 40 });
    expect(next.ok).toBe(true);
    if (next.ok) await next.lock.release();
  });

  it("stops waiting when its signal aborts", async () => {
    const runDir = fresh();
    const lock = await held(runDir);
    const r = await acquirePlanLock({ runDir, owner: { tool: "w" }, retries: 1_000, signal: AbortSignal.timeout(150) });
    expect(r.ok || r.error.code).toBe("LOCKED");
    if (!r.ok) expect(r.error.message).toContain("aborted");
    await lock.release();
  });

  it("a release after a takeover leaves the new holder's lock in place (LOCK_NOT_OWNED)", async () => {
    const runDir = fresh();
    const lock = await held(runDir);
    // Simulate a takeover: the holder file vanishes and another holder's lock takes the directory.
    const lockDir = path.join(runDir, ".lock");
    rmSync(lockDir, { recursive: true });
    const other = await held(runDir, "other");
    const out = await lock.release();
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.error.code).toBe("LOCK_NOT_OWNED");
    expect(await readLockHolder(runDir)).toMatchObject({ held: true, holder: { token: other.holder.token } });
    await other.release();
  });

  it("takes over an empty or stale lock, but not one holding foreign files", async () => {
    const runDir = fresh();
    const lockDir = path.join(runDir, ".lock");
    mkdirSync(lockDir);
    const empty = await held(runDir); // an empty lock directory is free
    await empty.release();
    mkdirSync(lockDir);
    writeFileSync(path.join(lockDir, "notes.txt"), "mine");
    const past = new Date(Date.now() - 60_000);
    utimesSync(lockDir, past, past);
    const r = await acquirePlanLock({ runDir, owner: { tool: "t" }, staleMs: 2_000 });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatchObject({ code: "LOCKED", details: { file: lockDir } });
  });

  it("honours a holder's longer stale time: its heartbeat is watched that long before a takeover", async () => {
    const runDir = fresh();
    const lockDir = path.join(runDir, ".lock");
    mkdirSync(lockDir);
    const token = "a".repeat(32);
    const holder = { schemaVersion: 1, token, tool: "slow", pid: 7, host: "h", since: "2026-01-01T00:00:00.000Z", staleMs: 3_000 };
    writeFileSync(path.join(lockDir, `holder-${token}.json`), JSON.stringify(holder));
    const past = new Date(Date.now() - 70_000);
    utimesSync(lockDir, past, past);
    const t0 = performance.now();
    const late = await acquirePlanLock({ runDir, owner: { tool: "quick" }, staleMs: 2_000 });
    if (!late.ok) throw late.error;
    expect(performance.now() - t0).toBeGreaterThan(2_950);
    expect(late.lock.tookOverFrom).toMatchObject({ tool: "slow", staleMs: 3_000 });
    await late.lock.release();
  });

  it("sweeps old leftovers of interrupted acquisitions, but not young ones", async () => {
    const runDir = fresh();
    for (const name of [".lock-new-old", ".lock-stale-old-holder-x.json", ".lock-new-young"]) mkdirSync(path.join(runDir, name));
    const past = new Date(Date.now() - 60_000);
    utimesSync(path.join(runDir, ".lock-new-old"), past, past);
    utimesSync(path.join(runDir, ".lock-stale-old-holder-x.json"), past, past);
    const lock = await held(runDir);
    expect(readdirSync(runDir).sort()).toEqual([".lock", ".lock-new-young"]);
    await lock.release();
  });

  it("names a missing run folder and refuses bad options at once", async () => {
    const r = await acquirePlanLock({ runDir: path.join(fresh(), "nope"), owner: { tool: "t" } });
    expect(!r.ok && r.error.code).toBe("NOT_FOUND");
    const bad = [
      { runDir: "", owner: { tool: "t" } },
      { runDir: fresh(), owner: { tool: " " } },
      { runDir: fresh(), owner: { tool: "t" }, staleMs: 500 },
      { runDir: fresh(), owner: { tool: "t" }, staleMs: 4_000, updateMs: 3_000 },
      { runDir: fresh(), owner: { tool: "t" }, retries: -1 },
    ];
    for (const options of bad) {
      let caught: unknown;
      try {
        await acquirePlanLock(options);
      } catch (e) {
        caught = e;
      }
      expect(isWorkflowError(caught, "INVALID_OPTIONS"), JSON.stringify(options)).toBe(true);
    }
  });
});
