/**
 * Who may write a run's history, as every PlanStore backend must enforce it (part of the PlanStore contract):
 * a reader (a store object holding no lock on the run) reads the live run and writes nothing, and a holder
 * whose lock was lost is fenced by its own lease, even when the very store object it locked with took the run
 * again. Fencing belongs to a lease, never to a store object.
 */
import { expect, it } from "vitest";
import type { CheckpointStore } from "../../src/engine/checkpoint-port.js";
import type { PlanStore } from "../../src/store/plan-store.js";
import { sampleMetadata } from "../helpers/metadata-fixtures.js";

/** What the holder cases need from a backend besides a fresh store. */
export interface HolderHarness {
  /** A second store object over the same runs as `store` (as another process would open them), holding nothing. */
  reopen(store: PlanStore): Promise<PlanStore>;
  /**
   * Takes `slug`'s lock from its holder the way a stall or a crash does, before the holder notices: the next
   * `lock()` succeeds, and the displaced holder still has its lock object and its lease's store.
   */
  loseLock(store: PlanStore, slug: string): Promise<void>;
  /**
   * The holder of `slug` stalls past its lease (`STALL_LEASE_MS`) and nobody takes the run meanwhile. Default: the
   * event loop blocked past it (no heartbeat runs), a real stall; a store with no clock of its own to outlive
   * plays it as its `loseLock` does.
   */
  stall?(store: PlanStore, slug: string): Promise<void>;
}

/** The lease of the stall case: the shortest the fs lock takes. */
export const STALL_LEASE_MS = 2_000;

/** Blocks the event loop (no timer, no socket read runs) past the stall case's lease. */
async function blockPastLease(): Promise<void> {
  const until = performance.now() + STALL_LEASE_MS + 300;
  while (performance.now() < until) {
    // busy: a stalled process runs nothing
  }
}

const now = (): Date => new Date();
const owner = (tool: string) => ({ owner: { tool } });
const REFUSED = /^LOCK_(LOST|NOT_OWNED)$/;

/** The code a write was refused with ("resolved" if it was not). */
async function refusal(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => "resolved",
    (e: unknown) => String((e as { code?: unknown })?.code ?? e),
  );
}

/** Registers the holder cases inside the contract's describe; `fresh` gives an empty store closed after the test. */
export function holderCases(fresh: () => Promise<PlanStore>, harness: HolderHarness, track: (s: PlanStore) => PlanStore): void {
  it("readers never write: checkpoints of a store without the run's lock read the live run and refuse every write before any work", async () => {
    const store = await fresh();
    await store.writeMetadata("live", sampleMetadata("live"), null);
    const held = await store.lock("live", owner("holder"));
    if (!held.ok) throw held.error;
    const holder = await (held.lock.store ?? store).checkpoints("live", { now });
    await holder.step("a", { n: 1 }, () => "A");
    await holder.recordCommitIntent({ id: "c1", message: "m", files: ["f.txt"], stepId: "a" });
    // A second store object (another process), then the same object once it holds a lock on another run only.
    const reader = track(await harness.reopen(store));
    const readers: CheckpointStore[] = [await reader.checkpoints("live", { now })];
    await reader.writeMetadata("other", sampleMetadata("other"), null);
    const other = await reader.lock("other", owner("reader"));
    if (!other.ok) throw other.error;
    readers.push(await reader.checkpoints("live", { now }));
    let ran = 0;
    for (const cps of readers) {
      expect((await cps.records()).map((r) => `${r.stepId}:${r.status}`)).toEqual(["a:completed"]);
      expect(await cps.record("a")).toMatchObject({ status: "completed", attempt: 1 });
      expect(await cps.record("nothing")).toBeUndefined();
      expect((await cps.commits()).map((c) => `${c.id}:${c.status}`)).toEqual(["c1:intended"]);
      // Even a step the history could reuse: a reader runs nothing and decides nothing.
      expect(await refusal(cps.step("x", {}, () => ((ran += 1), "never")))).toBe("LOCK_NOT_OWNED");
      expect(await refusal(cps.step("a", { n: 1 }, () => ((ran += 1), "never")))).toBe("LOCK_NOT_OWNED");
      expect(await refusal(cps.recordCommitIntent({ id: "c2", message: "m", files: [] }))).toBe("LOCK_NOT_OWNED");
      expect(await refusal(cps.markCommitted("c1", { sha: "abc1234" }))).toBe("LOCK_NOT_OWNED");
      expect(await refusal(cps.compact())).toBe("LOCK_NOT_OWNED");
    }
    expect(ran).toBe(0);
    // The holder was not fenced off by the readers: its lock holds and its next writes are acknowledged.
    expect(held.lock.signal.aborted).toBe(false);
    await held.lock.assertHeld();
    expect(await holder.step("b", {}, () => "B")).toMatchObject({ reused: false, output: "B" });
    expect(await holder.markCommitted("c1", { sha: "abc1234" })).toMatchObject({ status: "committed", sha: "abc1234" });
    // Readers read afresh: they see the holder's new writes and none of their own refused ones.
    expect((await readers[0]?.records())?.map((r) => r.stepId).sort()).toEqual(["a", "b"]);
    expect((await readers[1]?.commits())?.map((c) => `${c.id}:${c.status}`)).toEqual(["c1:committed"]);
    await other.lock.release();
    await held.lock.release();
  });

  it("a metadata write from a store object without the run's lock, while a holder holds it, is refused; the holder writes on", async () => {
    const store = await fresh();
    await store.writeMetadata("busy", sampleMetadata("busy"), null);
    const held = await store.lock("busy", owner("holder"));
    if (!held.ok) throw held.error;
    const other = track(await harness.reopen(store));
    const late = await other.writeMetadata("busy", { ...sampleMetadata("busy", 1), status: "completed" }, 1);
    expect(late.ok ? "written" : late.error.code).toMatch(/^(LOCKED|LOCK_NOT_OWNED|LOCK_LOST)$/);
    const via = held.lock.store ?? store;
    expect(await via.writeMetadata("busy", sampleMetadata("busy", 2), 1)).toMatchObject({ ok: true, metadata: { generation: 2, status: "running" } });
    await held.lock.release();
  });

  it("two holders through one store object: the displaced lease's late writes are refused, run nothing, and the new holder sees none of them", async () => {
    const store = await fresh();
    const a = await store.lock("r", owner("a"));
    if (!a.ok) throw a.error;
    const viaA = a.lock.store ?? store;
    expect(await viaA.writeMetadata("r", sampleMetadata("r"), null)).toMatchObject({ ok: true, metadata: { generation: 1 } });
    const cpsA = await viaA.checkpoints("r", { now });
    await cpsA.step("early", {}, () => "A");
    await harness.loseLock(store, "r");
    const b = await store.lock("r", owner("b"));
    if (!b.ok) throw b.error;
    const viaB = b.lock.store ?? store;
    // A writes before it noticed the loss, through its own lease: checkpoints opened before and after the loss.
    const late = await viaA.writeMetadata("r", { ...sampleMetadata("r", 1), status: "completed" }, 1);
    expect(late.ok ? "accepted" : late.error.code).toMatch(REFUSED);
    const lateLine = await viaA.appendJournal("r", { generation: 1, at: "2026-01-01T00:00:00.000Z", event: "late" });
    expect(lateLine.ok ? "accepted" : lateLine.error.code).toMatch(REFUSED);
    let ran = 0;
    for (const cps of [cpsA, await viaA.checkpoints("r", { now })]) {
      expect(await refusal(cps.step("late", {}, () => ((ran += 1), "late")))).toMatch(REFUSED);
      expect(await refusal(cps.step("early", { again: true }, () => ((ran += 1), "late")))).toMatch(REFUSED);
      expect(await refusal(cps.recordCommitIntent({ id: "late", message: "m", files: [] }))).toMatch(REFUSED);
    }
    expect(ran).toBe(0);
    // A lets go late: that releases its own lease only, never B's.
    await a.lock.release().catch(() => undefined);
    await b.lock.assertHeld();
    // B sees none of A's late writes, and writes on from the generation it read.
    expect(await viaB.readMetadata("r")).toMatchObject({ ok: true, metadata: { generation: 1, status: "running" } });
    const journal = await viaB.readJournal("r");
    expect(journal.ok && journal.entries.map((e) => e.event)).toEqual(["metadata"]);
    expect(await viaB.writeMetadata("r", sampleMetadata("r", 2), 1)).toMatchObject({ ok: true, metadata: { generation: 2 } });
    const cpsB = await viaB.checkpoints("r", { now });
    expect((await cpsB.records()).map((r) => `${r.stepId}:${r.status}`)).toEqual(["early:completed"]);
    expect(await cpsB.commits()).toEqual([]);
    expect(await cpsB.step("early", {}, () => "B")).toMatchObject({ reused: true, output: "A" });
    expect(await cpsB.step("late", {}, () => "B")).toMatchObject({ reused: false, reason: "no-record", output: "B" });
    expect(await b.lock.release()).toMatchObject({ ok: true, released: true });
  });

  it("a holder stalled past its lease while nobody took the run: its check is the overdue renewal, which lands (no LOCK_LOST), and the run is its again: a contender is LOCKED, a pause is accepted, its writes land", async () => {
    const store = await fresh();
    await store.writeMetadata("stalled", sampleMetadata("stalled"), null);
    const held = await store.lock("stalled", { owner: { tool: "holder" }, staleMs: STALL_LEASE_MS });
    if (!held.ok) throw held.error;
    await (harness.stall ?? blockPastLease)(store, "stalled");
    await held.lock.assertHeld();
    expect(held.lock.signal.aborted).toBe(false);
    const other = track(await harness.reopen(store));
    const contender = await other.lock("stalled", owner("contender"));
    expect(contender.ok ? "taken" : contender.error.code).toBe("LOCKED");
    expect(await other.requestControl("stalled", "pause", { reason: "hold on" })).toMatchObject({ ok: true });
    expect(await (held.lock.store ?? store).writeMetadata("stalled", sampleMetadata("stalled", 1), 1)).toMatchObject({ ok: true, metadata: { generation: 2 } });
    expect(await held.lock.release()).toMatchObject({ ok: true, released: true });
  });

  it("a step whose body runs while its store is closed: its completion is refused as closed and does not land", async () => {
    const store = await fresh();
    const held = await store.lock("mid", owner("holder"));
    if (!held.ok) throw held.error;
    const cps = await (held.lock.store ?? store).checkpoints("mid", { now });
    let inside!: () => void;
    const entered = new Promise<void>((r) => (inside = r));
    let letGo!: () => void;
    const gate = new Promise<void>((r) => (letGo = r));
    const step = cps.step("slow", {}, async () => (inside(), await gate, "late")).then(() => "written", (e: unknown) => e);
    await entered;
    await store.close();
    letGo();
    expect(await step).toMatchObject({ code: "LOCK_LOST", details: { ended: "closed" } });
    const reader = track(await harness.reopen(store));
    const records = await (await reader.checkpoints("mid", { now })).records();
    expect(records.map((r) => r.status).filter((s) => s === "completed")).toEqual([]);
    await held.lock.release().catch(() => undefined);
  });

  it("checkpoints asked twice under one lease are one history: each sees the other's steps, and a compaction through one keeps them", async () => {
    const store = await fresh();
    const held = await store.lock("twice", owner("holder"));
    if (!held.ok) throw held.error;
    const via = held.lock.store ?? store;
    const first = await via.checkpoints("twice", { now });
    const second = await via.checkpoints("twice", { now });
    await first.step("a", {}, () => "A");
    let ran = 0;
    expect(await second.step("a", {}, () => ((ran += 1), "again"))).toMatchObject({ reused: true, output: "A" });
    expect(ran).toBe(0);
    await second.compact();
    expect(await first.step("a", {}, () => ((ran += 1), "again"))).toMatchObject({ reused: true, output: "A" });
    expect(ran).toBe(0);
    await held.lock.release();
  });
}
