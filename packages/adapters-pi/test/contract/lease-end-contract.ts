/**
 * How a lease ends by its own holder's act, as every PlanStore backend must show it (part of the PlanStore
 * contract): after `lock.release()` every write under the lease is LOCK_LOST saying it was released, with the
 * same code, details and words on every store; after the store's `close()` its leases are no longer renewed, so
 * another store object takes the run once they run out.
 */
import { expect, it } from "vitest";
import type { PlanStore, StoreLock } from "../../src/store/plan-store.js";
import { sampleMetadata } from "../helpers/metadata-fixtures.js";
import { STALL_LEASE_MS, type HolderHarness } from "./holders-contract.js";

const now = (): Date => new Date();
const owner = (tool: string) => ({ owner: { tool } });
const caught = (p: Promise<unknown>): Promise<unknown> => p.then(() => "written", (e: unknown) => e);

/** Registers the lease-end cases inside the contract's describe; `fresh` gives an empty store closed after the test. */
export function leaseEndCases(fresh: () => Promise<PlanStore>, harness: HolderHarness, track: (s: PlanStore) => PlanStore): void {
  /**
   * A lease ended by its holder's own act (`end`): every write under it, through the lease's store and through
   * checkpoints opened before and after the end, is refused with `words` before any work, and nothing lands.
   */
  async function refusedAfter(slug: string, end: (store: PlanStore, lock: StoreLock) => Promise<void>, ended: "closed" | "released", words: RegExp): Promise<void> {
    const store = await fresh();
    await store.writeMetadata(slug, sampleMetadata(slug), null);
    const held = await store.lock(slug, owner("holder"));
    if (!held.ok) throw held.error;
    const via = held.lock.store ?? store;
    const before = await via.checkpoints(slug, { now });
    await before.step("a", {}, () => "A");
    await end(store, held.lock);
    const refused = { code: "LOCK_LOST", message: expect.stringMatching(words), details: { field: "epoch", ended } };
    const meta = await via.writeMetadata(slug, { ...sampleMetadata(slug, 1), status: "completed" }, 1);
    expect(meta.ok ? "written" : meta.error).toMatchObject(refused);
    const line = await via.appendJournal(slug, { generation: 1, at: "2026-01-01T00:00:00.000Z", event: `after-${ended}` });
    expect(line.ok ? "written" : line.error).toMatchObject(refused);
    let ran = 0;
    // Checkpoints opened before the end and after it (through the lease's store) alike.
    for (const cps of [before, await via.checkpoints(slug, { now })]) {
      expect(await caught(cps.step("b", {}, () => ((ran += 1), "B")))).toMatchObject(refused);
      expect(await caught(cps.recordCommitIntent({ id: "c", message: "m", files: [] }))).toMatchObject(refused);
    }
    expect(ran).toBe(0);
    expect(await caught(held.lock.assertHeld())).toMatchObject(refused);
    // Nothing of it landed: another store object reads the run as it was at the end.
    const reader = track(await harness.reopen(store));
    expect(await reader.readMetadata(slug)).toMatchObject({ ok: true, metadata: { generation: 1, status: "running" } });
    const journal = await reader.readJournal(slug);
    expect(journal.ok && journal.entries.map((e) => e.event)).toEqual(["metadata"]);
    const cps = await reader.checkpoints(slug, { now });
    expect((await cps.records()).map((r) => `${r.stepId}:${r.status}`)).toEqual(["a:completed"]);
    expect(await cps.commits()).toEqual([]);
    if (ended === "closed") await held.lock.release().catch(() => undefined);
  }

  it("after lock.release() every write under the lease is LOCK_LOST saying it was released (details.ended: released), before any work, and nothing lands", async () => {
    await refusedAfter("rel", async (_store, lock) => void expect(await lock.release()).toMatchObject({ ok: true, released: true }), "released", /run rel: the lease of epoch \d+ was released by its holder; nothing more is written under it\./);
  });

  it("close() gives up the leases taken through the store object: every write under them is then refused with LOCK_LOST (the store was closed) before any work, and nothing lands", async () => {
    await refusedAfter("shut", (store) => store.close(), "closed", /run shut: the lease of epoch \d+ was given up when its store was closed/);
  });

  it("after close() the leases taken through the store are no longer renewed: another store object takes the run once they run out, and writes", async () => {
    const store = await fresh();
    await store.writeMetadata("after", sampleMetadata("after"), null);
    const held = await store.lock("after", { owner: { tool: "holder" }, staleMs: STALL_LEASE_MS });
    if (!held.ok) throw held.error;
    await (held.lock.store ?? store).writeMetadata("after", sampleMetadata("after", 1), 1);
    await store.close();
    const other = track(await harness.reopen(store));
    // Polled, not timed: the run is free once the lease ran out; a lease still renewed never frees it.
    const giveUpAt = performance.now() + 4 * STALL_LEASE_MS;
    let taken = await other.lock("after", { owner: { tool: "next" }, staleMs: STALL_LEASE_MS });
    while (!taken.ok && taken.error.code === "LOCKED" && performance.now() < giveUpAt) {
      await new Promise((r) => setTimeout(r, 100));
      taken = await other.lock("after", { owner: { tool: "next" }, staleMs: STALL_LEASE_MS });
    }
    if (!taken.ok) throw taken.error;
    const via = taken.lock.store ?? other;
    expect(await via.writeMetadata("after", sampleMetadata("after", 2), 2)).toMatchObject({ ok: true, metadata: { generation: 3 } });
    expect(await (await via.checkpoints("after", { now })).step("x", {}, () => "X")).toMatchObject({ reused: false, output: "X" });
    // The closed store's lease stays given up (closed), not taken for another's.
    expect(await caught(held.lock.assertHeld())).toMatchObject({ code: "LOCK_LOST", details: { ended: "closed" } });
    expect(await taken.lock.release()).toMatchObject({ ok: true, released: true });
  });
}
