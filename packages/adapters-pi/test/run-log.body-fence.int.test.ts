/**
 * A holder woken after a newcomer took the lock but before the newcomer claimed the run log (SIGSTOP, a starved
 * event loop) must not start a step's body: the segment fence cannot see a newcomer that has not claimed yet, so
 * the lock's own check runs before the body too (free while the heartbeat is fresh). The pause is made exact:
 * this process's event loop is blocked inside the first step's body until another process has taken the lock
 * (its heartbeat stood still past the stale time) and holds it without claiming.
 */
import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createFsPlanStore } from "../src/store/plan-store.js";
import { spawnLockChild, type LockChild } from "./helpers/lock-children.js";

const STALE_MS = 2_000;
const dirs: string[] = [];
const children: LockChild[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) {
    c.end();
    await c.exited;
  }
  dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
});

/** Blocks this thread (no timer, no I/O callback runs) until `done()`, looking every 20 ms; throws after 30 s. */
function freezeUntil(done: () => boolean): void {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  for (let looks = 0; !done(); looks++) {
    if (looks > 1_500) throw new Error("the other process never took the lock");
    Atomics.wait(cell, 0, 0, 20);
  }
}

async function heldStep() {
  const repoRoot = mkdtempSync(path.join(tmpdir(), "pk-body-fence-"));
  dirs.push(repoRoot);
  const store = createFsPlanStore({ repoRoot });
  const got = await store.lock("run", { owner: { tool: "a" }, staleMs: STALE_MS });
  if (!got.ok) throw got.error;
  const cps = await (got.lock.store ?? store).checkpoints("run", { now: () => new Date() });
  return { store, lock: got.lock, cps, runDir: await store.runDir("run") };
}

describe("the fence before a step's body (file store)", () => {
  it("refuses with LOCK_LOST, body never called, once another process took the lock and has not claimed the run log yet", async () => {
    const { store, lock, cps, runDir } = await heldStep();
    const flag = path.join(path.dirname(runDir), "taken.flag");
    const taker = spawnLockChild("lock-taker.mjs", [runDir, flag]);
    children.push(taker);
    // The first step's body stands still (this process refreshes nothing) until the lock is someone else's.
    expect(await cps.step("first", {}, () => (freezeUntil(() => existsSync(flag)), 1))).toMatchObject({ reused: false, output: 1 });
    let ran = 0;
    await expect(cps.step("work", {}, () => ++ran)).rejects.toMatchObject({ code: "LOCK_LOST" });
    expect(ran).toBe(0);
    // The newcomer never claimed the run log: only the lock told this holder.
    expect(await taker.next(/^taken$/, true)).toBe("taken");
    // Every later write of this holder is refused at once.
    await expect(cps.step("later", {}, () => ++ran)).rejects.toMatchObject({ code: "LOCK_LOST" });
    expect(ran).toBe(0);
    await lock.release();
    await store.close();
  });

  it("runs the body of a holder that stood still past the stale time while nobody took the lock (no false LOCK_LOST)", async () => {
    const { store, lock, cps } = await heldStep();
    const cell = new Int32Array(new SharedArrayBuffer(4));
    expect(await cps.step("first", {}, () => (Atomics.wait(cell, 0, 0, STALE_MS + 500), 1))).toMatchObject({ output: 1 });
    let ran = 0;
    expect(await cps.step("work", {}, () => ++ran)).toMatchObject({ reused: false, output: 1 });
    expect(ran).toBe(1);
    expect(await lock.release()).toEqual({ ok: true, released: true });
    await store.close();
  });

  it("with a fresh heartbeat still looks at its own segment before the body: runlog/ moved away under the holder stops the body", async () => {
    const { store, lock, cps, runDir } = await heldStep();
    expect(await cps.step("first", {}, () => 1)).toMatchObject({ reused: false, output: 1 });
    renameSync(path.join(runDir, "runlog"), path.join(runDir, "runlog.moved"));
    let ran = 0;
    await expect(cps.step("work", {}, () => ++ran)).rejects.toMatchObject({ code: "UNSAFE_FILE" });
    expect(ran).toBe(0);
    await lock.release();
    await store.close();
  });

  it("with a fresh heartbeat skips the listing before the body: a segment planted with a higher epoch is met after the sync, and nothing is acknowledged", async () => {
    const { store, lock, cps, runDir } = await heldStep();
    expect(await cps.step("first", {}, () => 1)).toMatchObject({ reused: false, output: 1 });
    writeFileSync(path.join(runDir, "runlog", "0999999999.seg"), "");
    let ran = 0;
    await expect(cps.step("work", {}, () => ++ran)).rejects.toMatchObject({ code: "LOCK_LOST" });
    // The lock vouched for this holder, so the body ran; its record was refused by the fence after the sync.
    expect(ran).toBe(1);
    await expect(cps.step("later", {}, () => ++ran)).rejects.toMatchObject({ code: "LOCK_LOST" });
    expect(ran).toBe(1);
    const records = await cps.records();
    expect(records.find((r) => r.stepId === "first")?.status).toBe("completed");
    expect(records.find((r) => r.stepId === "work")?.status).not.toBe("completed");
    await lock.release();
    await store.close();
  });
});
