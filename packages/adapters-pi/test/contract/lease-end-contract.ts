/**
 * How a lease ends by its own holder's act, as every PlanStore backend must show it (part of the PlanStore
 * contract): after `lock.release()` every write under the lease is LOCK_LOST saying it was released, with the
 * same code, details and words on every store; after the store's `close()` its leases are no longer renewed, so
 * another store object takes the run once they run out.
 */
import { expect, it } from "vitest";
import type { PlanStore } from "../../src/store/plan-store.js";
import { sampleMetadata } from "../helpers/metadata-fixtures.js";
import { STALL_LEASE_MS, type HolderHarness } from "./holders-contract.js";

const now = (): Date => new Date();
const owner = (tool: string) => ({ owner: { tool } });
const caught = (p: Promise<unknown>): Promise<unknown> => p.then(() => "written", (e: unknown) => e);

/** Registers the lease-end cases inside the contract's describe; `fresh` gives an empty store closed after the test. */
export function leaseEndCases(fresh: () => Promise<PlanStore>, harness: HolderHarness, track: (s: PlanStore) => PlanStore): void {
  it("after lock.release() every write under the lease is LOCK_LOST saying it was released (details.ended: released), before any work, and nothing lands", async () => {
    const store = await fresh();
    await store.writeMetadata("rel", sampleMetadata("rel"), null);
    const held = await store.lock("rel", owner("holder"));
    if (!held.ok) throw held.error;
    const via = held.lock.store ?? store;
    const before = await via.checkpoints("rel", { now });
    await before.step("a", {}, () => "A");
    expect(await held.lock.release()).toMatchObject({ ok: true, released: true });
    const released = { code: "LOCK_LOST", message: expect.stringMatching(/run rel: the lease of epoch \d+ was released by its holder; nothing more is written under it\./), details: { field: "epoch", ended: "released" } };
    const meta = await via.writeMetadata("rel", { ...sampleMetadata("rel", 1), status: "completed" }, 1);
    expect(meta.ok ? "written" : meta.error).toMatchObject(released);
    const line = await via.appendJournal("rel", { generation: 1, at: "2026-01-01T00:00:00.000Z", event: "after-release" });
    expect(line.ok ? "written" : line.error).toMatchObject(released);
    let ran = 0;
    // Checkpoints opened before the release and after it (through the lease's store) alike.
    for (const cps of [before, await via.checkpoints("rel", { now })]) {
      expect(await caught(cps.step("b", {}, () => ((ran += 1), "B")))).toMatchObject(released);
      expect(await caught(cps.recordCommitIntent({ id: "c", message: "m", files: [] }))).toMatchObject(released);
    }
    expect(ran).toBe(0);
    expect(await caught(held.lock.assertHeld())).toMatchObject(released);
    // Nothing of it landed: another store object reads the run as it was at the release.
    const reader = track(await harness.reopen(store));
    expect(await reader.readMetadata("rel")).toMatchObject({ ok: true, metadata: { generation: 1, status: "running" } });
    const journal = await reader.readJournal("rel");
    expect(journal.ok && journal.entries.map((e) => e.event)).toEqual(["metadata"]);
    const cps = await reader.checkpoints("rel", { now });
    expect((await cps.records()).map((r) => `${r.stepId}:${r.status}`)).toEqual(["a:completed"]);
    expect(await cps.commits()).toEqual([]);
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
