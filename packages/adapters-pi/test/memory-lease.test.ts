/**
 * The memory store's lease keeps the rule of the fs lock and the PostgreSQL lease (lock/heartbeat.ts
 * `refreshOverdue`, both clocks), on a clock the test moves: a lease not renewed for its staleMs has run out and
 * the next lock takes the run (the holder's check then says LOCK_LOST); a holder that ran out while nobody took the
 * run renews it when it acts again, after which the run is its own again (a contender is LOCKED, a pause accepted).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { RefreshStamp } from "../src/lock/heartbeat.js";
import { createMemoryPlanStore, type MemoryPlanStore } from "./helpers/memory-plan-store.js";
import { sampleMetadata } from "./helpers/metadata-fixtures.js";

afterEach(() => vi.useRealTimers());

const LEASE_MS = 1_000;

/** A store on a clock the test moves, a second store object over it (another process), and the held run "r". */
async function setup() {
  let now: RefreshStamp = { mono: 0, wall: 0 };
  const store = createMemoryPlanStore({ clock: () => now });
  const other: MemoryPlanStore = store.reopen();
  await store.writeMetadata("r", sampleMetadata("r"), null);
  const held = await store.lock("r", { owner: { tool: "a" }, staleMs: LEASE_MS });
  if (!held.ok) throw held.error;
  const advance = (mono: number, wall = mono): void => {
    now = { mono: now.mono + mono, wall: now.wall + wall };
  };
  const contend = async (): Promise<string> => {
    const b = await other.lock("r", { owner: { tool: "b" } });
    return b.ok ? "taken" : b.error.code;
  };
  return { store, other, lock: held.lock, advance, contend };
}

describe("memory store lease", () => {
  it("within its lease the run stays its holder's: a contender is LOCKED", async () => {
    const { lock, advance, contend } = await setup();
    advance(LEASE_MS);
    expect(await contend()).toBe("LOCKED");
    await expect(lock.assertHeld()).resolves.toBeUndefined();
  });

  it("a lease not renewed for its staleMs has run out: the next lock takes the run, and the holder's check says LOCK_LOST", async () => {
    const { lock, advance, contend } = await setup();
    advance(LEASE_MS + 1);
    expect(await contend()).toBe("taken");
    await expect(lock.assertHeld()).rejects.toMatchObject({ code: "LOCK_LOST" });
    expect(lock.signal.aborted).toBe(true);
  });

  it("a suspend (the wall clock an hour on, the monotonic one still) runs the lease out as well: either clock decides", async () => {
    const { lock, advance, contend } = await setup();
    advance(0, 3_600_000);
    expect(await contend()).toBe("taken");
    await expect(lock.assertHeld()).rejects.toMatchObject({ code: "LOCK_LOST" });
  });

  it("a holder that ran out while nobody took the run renews it when it acts: no LOCK_LOST, a contender is LOCKED, a pause is accepted", async () => {
    const { other, lock, advance, contend } = await setup();
    advance(LEASE_MS * 5);
    await expect(lock.assertHeld()).resolves.toBeUndefined();
    expect(await contend()).toBe("LOCKED");
    expect(await other.requestControl("r", "pause")).toMatchObject({ ok: true });
  });

  it("a stalled holder (expireLock) nobody displaced: its check renews the lease, and the run is its again", async () => {
    const { store, other, lock, contend } = await setup();
    store.expireLock("r");
    expect(await other.requestControl("r", "pause")).toMatchObject({ ok: false, error: { code: "NOT_RUNNING" } });
    await expect(lock.assertHeld()).resolves.toBeUndefined();
    expect(lock.signal.aborted).toBe(false);
    expect(await contend()).toBe("LOCKED");
    expect(await other.requestControl("r", "pause")).toMatchObject({ ok: true });
  });

  it("a stalled holder's write renews its lease as its check does", async () => {
    const { store, lock, contend } = await setup();
    store.expireLock("r");
    expect(await lock.store?.writeMetadata("r", sampleMetadata("r", 1), 1)).toMatchObject({ ok: true, metadata: { generation: 2 } });
    expect(await contend()).toBe("LOCKED");
  });

  it("the heartbeat renews a waiting holder's lease: past a whole lease of the clock, a contender is still LOCKED", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const { advance, contend } = await setup();
    advance(LEASE_MS - 100);
    // One heartbeat (a third of the lease), with the holder doing nothing: the lease is renewed at the clock's now.
    vi.advanceTimersByTime(LEASE_MS / 3 + 1);
    advance(LEASE_MS - 100);
    expect(await contend()).toBe("LOCKED");
  });

  it("closing the store stops its leases' heartbeats, as PostgreSQL's close does: they run out and another store takes the run", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const { store, advance, contend } = await setup();
    await store.close();
    advance(LEASE_MS - 100);
    vi.advanceTimersByTime(LEASE_MS / 3 + 1);
    advance(LEASE_MS - 100);
    expect(await contend()).toBe("taken");
  });

  it("a run gc removed while its holder had run out is lost to that holder: its check and its writes say LOCK_LOST", async () => {
    const { store, lock, advance } = await setup();
    const cps = await (lock.store ?? store).checkpoints("r", { now: () => new Date() });
    await cps.step("a", null, () => "a");
    const finished = await (lock.store ?? store).writeMetadata("r", { ...sampleMetadata("r", 1), status: "completed" }, 1);
    expect(finished).toMatchObject({ ok: true });
    advance(LEASE_MS + 1);
    // Nobody holds the run by the rule of every store, so retention removes it, as gc does on fs and PostgreSQL.
    const report = await store.gc({ keep: 0, now: () => new Date(Date.UTC(2030, 0, 1)) });
    expect(report.removed).toMatchObject([{ slug: "r" }]);
    // The holder wakes: nothing it writes may land in a run nobody can read any more.
    await expect(lock.assertHeld()).rejects.toMatchObject({ code: "LOCK_LOST", message: expect.stringContaining("gc removed the run"), details: { hint: expect.stringContaining("the run is gone") } });
    await expect(cps.step("b", null, () => "b")).rejects.toMatchObject({ code: "LOCK_LOST" });
    expect(await store.readMetadata("r")).toEqual({ ok: true, metadata: null });
  });

  it("a released lease is not renewed by a late check: LOCK_LOST, and the next lock takes the run", async () => {
    const { lock, contend } = await setup();
    expect(await lock.release()).toMatchObject({ ok: true, released: true });
    await expect(lock.assertHeld()).rejects.toMatchObject({ code: "LOCK_LOST", message: expect.stringContaining("released") });
    expect(await contend()).toBe("taken");
  });
});
