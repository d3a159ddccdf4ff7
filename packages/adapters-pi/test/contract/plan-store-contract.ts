/** The behaviour every PlanStore backend must show; run it with `runPlanStoreContract(name, makeStore, harness)`. */
import { describe, it, expect, afterEach } from "vitest";
import { holderCases, type HolderHarness } from "./holders-contract.js";
import { journalPagingCases } from "./journal-paging-contract.js";
import { leaseEndCases } from "./lease-end-contract.js";
import { rebuildFromJournal } from "../../src/store/journal.js";
import type { PlanStore } from "../../src/store/plan-store.js";
import { sampleMetadata } from "../helpers/metadata-fixtures.js";

export type { HolderHarness } from "./holders-contract.js";

/**
 * Registers the contract tests for one backend; `makeStore` gives a fresh, empty store per test, and `harness`
 * a second store object over the same runs and a way to take a holder's lock away (holders-contract.ts).
 */
export function runPlanStoreContract(name: string, makeStore: () => Promise<PlanStore>, harness: HolderHarness): void {
  describe(`PlanStore contract: ${name}`, () => {
    const open: PlanStore[] = [];
    const track = (s: PlanStore): PlanStore => (open.push(s), s);
    const fresh = async (): Promise<PlanStore> => track(await makeStore());
    afterEach(async () => {
      for (const s of open.splice(0)) await s.close();
    });

    it("round-trips metadata and counts generations from 1", async () => {
      const store = await fresh();
      expect(await store.readMetadata("run-a")).toEqual({ ok: true, metadata: null });
      const w1 = await store.writeMetadata("run-a", sampleMetadata("run-a", 0), null);
      const w2 = await store.writeMetadata("run-a", sampleMetadata("run-a", 1), 1);
      expect(w1.ok && w1.metadata.generation).toBe(1);
      expect(w2.ok && w2.metadata.generation).toBe(2);
      const r = await store.readMetadata("run-a");
      expect(r.ok && r.metadata).toEqual(w2.ok && w2.metadata);
    });

    it("refuses a stale generation and a create over an existing run", async () => {
      const store = await fresh();
      await store.writeMetadata("run-a", sampleMetadata("run-a", 0), null);
      await store.writeMetadata("run-a", sampleMetadata("run-a", 1), 1);
      const stale = await store.writeMetadata("run-a", sampleMetadata("run-a", 5), 1);
      expect(!stale.ok && stale.error.code).toBe("STALE_GENERATION");
      const dup = await store.writeMetadata("run-a", sampleMetadata("run-a", 5), null);
      expect(!dup.ok && dup.error.code).toBe("STALE_GENERATION");
      const r = await store.readMetadata("run-a");
      expect(r.ok && r.metadata?.currentStepId).toBe("step:1");
    });

    it("refuses invalid slugs and metadata naming another slug", async () => {
      const store = await fresh();
      for (const bad of ["..", "a/b", "CON", ""]) {
        const r = await store.readMetadata(bad);
        expect(!r.ok && r.error.code).toBe("INVALID_SLUG");
        const w = await store.writeMetadata(bad, sampleMetadata(bad), null);
        expect(!w.ok && w.error.code).toBe("INVALID_SLUG");
      }
      const other = await store.writeMetadata("run-a", sampleMetadata("run-b"), null);
      // The one check, worded alike on every store: the run, the field and the value it found.
      expect(!other.ok && other.error).toMatchObject({ code: "INVALID_STATE", message: expect.stringContaining('metadata for run run-a names slug "run-b"'), details: { field: "slug", value: "run-b" } });
    });

    it("refuses a journal entry the journal could not hold, with the same error on every store, and appends nothing", async () => {
      const store = await fresh();
      const w = await store.writeMetadata("run-k", sampleMetadata("run-k", 0), null);
      if (!w.ok) throw w.error;
      const at = "2026-01-01T00:00:00.000Z";
      const cases: Array<[unknown, string, unknown]> = [
        [{ generation: 1, at, event: "metadata-delta" }, "event", "metadata-delta"],
        [{ generation: 1, at, event: "" }, "event", ""],
        [{ generation: 1, at, event: "x".repeat(129) }, "event", "x".repeat(80)],
        [{ generation: -1, at, event: "e" }, "generation", -1],
        [{ generation: 1, at: "", event: "e" }, "at", ""],
        [{ generation: 1, at, event: "e", extra: true }, "extra", true],
      ];
      for (const [entry, field, value] of cases) {
        const r = await store.appendJournal("run-k", entry as Parameters<PlanStore["appendJournal"]>[1]);
        expect(!r.ok && r.error, JSON.stringify(entry).slice(0, 60)).toMatchObject({ code: "INVALID_OPTIONS", message: expect.stringContaining("run run-k"), details: { field, value } });
      }
      const j = await store.readJournal("run-k");
      expect(j.ok && j.entries.map((e) => e.event)).toEqual(["metadata"]);
    });

    it("journals every write so the latest metadata can be rebuilt", async () => {
      const store = await fresh();
      let gen: number | null = null;
      for (let i = 0; i < 4; i++) {
        const w = await store.writeMetadata("run-j", sampleMetadata("run-j", i), gen);
        if (!w.ok) throw w.error;
        gen = w.metadata.generation;
      }
      const j = await store.readJournal("run-j");
      if (!j.ok) throw j.error;
      expect(j.entries.map((e) => e.generation)).toEqual([1, 2, 3, 4]);
      const rebuilt = rebuildFromJournal(j.entries);
      const current = await store.readMetadata("run-j");
      expect(rebuilt.ok && rebuilt.metadata).toEqual(current.ok && current.metadata);
    });

    it("interleaves appended events with snapshots and still rebuilds the latest metadata", async () => {
      const store = await fresh();
      const w1 = await store.writeMetadata("run-e", sampleMetadata("run-e", 0), null);
      if (!w1.ok) throw w1.error;
      const e = await store.appendJournal("run-e", { generation: 1, at: "2026-01-01T00:00:00.000Z", event: "step-reused", data: { stepId: "plan" } });
      expect(e.ok && e.entry.seq).toBe(2);
      const reserved = await store.appendJournal("run-e", { generation: 1, at: "2026-01-01T00:00:00.000Z", event: "metadata" });
      expect(!reserved.ok && reserved.error.code).toBe("INVALID_OPTIONS");
      const w2 = await store.writeMetadata("run-e", sampleMetadata("run-e", 1), 1);
      if (!w2.ok) throw w2.error;
      const j = await store.readJournal("run-e");
      if (!j.ok) throw j.error;
      expect(j.entries.map((x) => [x.seq, x.event])).toEqual([
        [1, "metadata"],
        [2, "step-reused"],
        [3, "metadata"],
      ]);
      const rebuilt = rebuildFromJournal(j.entries);
      expect(rebuilt.ok && rebuilt.metadata).toEqual(w2.metadata);
    });

    it("reuses a completed step for the same input and reruns it for another input, counting attempts", async () => {
      const store = await fresh();
      await store.writeMetadata("run-c", sampleMetadata("run-c"), null);
      const now = () => new Date("2026-01-01T00:00:00.000Z");
      // Checkpoints write only through a store that holds the run's lock.
      const lock = await store.lock("run-c", { owner: { tool: "contract" } });
      if (!lock.ok) throw lock.error;
      const cps = await store.checkpoints("run-c", { now });
      let calls = 0;
      const first = await cps.step("plan", { issue: 1 }, () => ({ n: ++calls }));
      expect(first).toMatchObject({ reused: false, reason: "no-record", output: { n: 1 } });
      const again = await (await store.checkpoints("run-c", { now })).step("plan", { issue: 1 }, () => ({ n: ++calls }));
      expect(again).toMatchObject({ reused: true, output: { n: 1 } });
      const changed = await cps.step("plan", { issue: 2 }, () => ({ n: ++calls }));
      // A new input starts counting again: earlier successes never count against a retry budget (decideStep).
      expect(changed).toMatchObject({ reused: false, reason: "input-changed", output: { n: 2 }, record: { attempt: 1 } });
      await expect(cps.step("boom", {}, () => Promise.reject(new Error("x")))).rejects.toThrow("x");
      expect(await cps.record("boom")).toMatchObject({ status: "failed", attempt: 1 });
      const retried = await cps.step("boom", {}, () => "ok");
      expect(retried).toMatchObject({ reused: false, reason: "failed", record: { attempt: 2 } });
      expect(calls).toBe(2);
      // The error text a failed step keeps is every store's (stepErrorText): capped, NUL replaced.
      await expect(cps.step("long", {}, () => Promise.reject(new Error(`\u0000${"e".repeat(25_000)}`)))).rejects.toThrow();
      const long = await cps.record("long");
      expect(long?.error).toHaveLength(10_000);
      expect(long?.error).toMatch(/^Error: \uFFFDe+$/);
      await lock.lock.release();
    });

    it("gc removes finished runs past the limits and keeps running and locked ones", async () => {
      const store = await fresh();
      const at = (day: number) => `2026-01-0${day}T00:00:00.000Z`;
      const put = async (slug: string, status: "completed" | "running" | "failed", day: number) => {
        const w = await store.writeMetadata(slug, { ...sampleMetadata(slug), status, createdAt: at(day), updatedAt: at(day) }, null);
        if (!w.ok) throw w.error;
      };
      await put("old-done", "completed", 1);
      await put("old-failed", "failed", 2);
      await put("old-running", "running", 1);
      await put("new-done", "completed", 5);
      await put("locked-done", "completed", 1);
      const held = await store.lock("locked-done", { owner: { tool: "t" } });
      if (!held.ok) throw held.error;
      const report = await store.gc({ keep: 1, now: () => new Date(at(6)) });
      expect(report.removed.map((r) => r.slug).sort()).toEqual(["old-done", "old-failed"]);
      const kept = Object.fromEntries(report.kept.map((k) => [k.slug, k.reason]));
      expect(kept).toMatchObject({ "old-running": "active", "new-done": "within-limits", "locked-done": "locked" });
      expect((await store.list()).map((r) => r.slug)).toEqual(["locked-done", "new-done", "old-running"]);
      await held.lock.release();
    });

    it("gc checks its limits the same way on every store: a negative, fractional or non-number keep or olderThan, or neither, is INVALID_OPTIONS and removes nothing", async () => {
      const store = await fresh();
      const done = { ...sampleMetadata("run-g", 0), status: "completed" as const };
      const w = await store.writeMetadata("run-g", done, null);
      if (!w.ok) throw w.error;
      const now = (): Date => new Date();
      const cases: Array<[Record<string, unknown>, string, unknown]> = [
        [{ keep: -1 }, "keep", -1],
        [{ keep: 1.5 }, "keep", 1.5],
        [{ keep: Number.NaN }, "keep", Number.NaN],
        [{ olderThan: -5 }, "olderThan", -5],
        [{ olderThan: "1h" }, "olderThan", "1h"],
        [{}, "keep", undefined],
      ];
      for (const [limits, field, value] of cases) {
        await expect(store.gc({ ...limits, now } as Parameters<PlanStore["gc"]>[0]), JSON.stringify(limits)).rejects.toMatchObject({ code: "INVALID_OPTIONS", details: { field, value } });
      }
      const r = await store.readMetadata("run-g");
      expect(r.ok && r.metadata?.status).toBe("completed");
    });

    it("lists runs by slug with their metadata", async () => {
      const store = await fresh();
      await store.writeMetadata("run-b", sampleMetadata("run-b"), null);
      await store.writeMetadata("run-a", sampleMetadata("run-a"), null);
      const list = await store.list();
      expect(list.map((e) => e.slug)).toEqual(["run-a", "run-b"]);
      expect(list.every((e) => e.ok && e.metadata?.generation === 1)).toBe(true);
    });

    it("files, reads and clears control requests: a stop before a pause, only that very request cleared", async () => {
      const store = await fresh();
      await store.writeMetadata("run-k", { ...sampleMetadata("run-k"), status: "running" }, null);
      const held = await store.lock("run-k", { owner: { tool: "t" } });
      if (!held.ok) throw held.error;
      expect(await store.readControl("run-k")).toEqual({ ok: true, request: null });
      const at = () => "2026-01-02T03:04:05.000Z";
      const pause = await store.requestControl("run-k", "pause", { reason: "lunch", now: at });
      if (!pause.ok) throw pause.error;
      // A store may stamp the generation the filer saw (the fs store does: see isSupersededRequest).
      const stamp = pause.request.generation === undefined ? {} : { generation: expect.any(Number) as number };
      expect(pause.request).toEqual({ schemaVersion: 1, signal: "pause", reason: "lunch", requestedAt: at(), requestedBy: { pid: process.pid, host: expect.any(String) }, ...stamp });
      expect(await store.readControl("run-k")).toEqual({ ok: true, request: pause.request });
      const stop = await store.requestControl("run-k", "stop");
      if (!stop.ok) throw stop.error;
      expect(stop.request).toMatchObject({ signal: "stop", reason: "stop requested" });
      expect(await store.readControl("run-k")).toEqual({ ok: true, request: stop.request });
      expect(await store.readControl("run-k", "pause")).toEqual({ ok: true, request: pause.request });
      expect(await store.clearControl("run-k", stop.request)).toEqual({ ok: true, cleared: true });
      expect(await store.clearControl("run-k", stop.request)).toEqual({ ok: true, cleared: false });
      expect(await store.readControl("run-k")).toEqual({ ok: true, request: pause.request });
      // A newer request filed meanwhile is not cleared by the older one's clear: the next check still sees it.
      const newer = await store.requestControl("run-k", "pause", { reason: "again", now: () => "2026-01-02T03:04:06.000Z" });
      if (!newer.ok) throw newer.error;
      expect(await store.clearControl("run-k", pause.request)).toEqual({ ok: true, cleared: false });
      expect(await store.readControl("run-k", "pause")).toEqual({ ok: true, request: newer.request });
      expect(await store.clearControl("run-k", newer.request)).toEqual({ ok: true, cleared: true });
      expect(await store.readControl("run-k")).toEqual({ ok: true, request: null });
      await held.lock.release();
    });

    it("withdraws a pending pause from a process holding nothing while another holds the run: only that very request, only a pause", async () => {
      const store = await fresh();
      await store.writeMetadata("run-w", { ...sampleMetadata("run-w"), status: "running" }, null);
      const held = await store.lock("run-w", { owner: { tool: "t" } });
      if (!held.ok) throw held.error;
      const other = track(await harness.reopen(store));
      const pause = await other.requestControl("run-w", "pause", { reason: "lunch", now: () => "2026-01-02T03:04:05.000Z" });
      const stop = await other.requestControl("run-w", "stop");
      if (!pause.ok || !stop.ok) throw new Error("not filed");
      expect(await other.withdrawControl("run-w", stop.request)).toMatchObject({ ok: false, error: { code: "INVALID_OPTIONS" } });
      expect(await other.withdrawControl("run-w", pause.request)).toEqual({ ok: true, withdrawn: true });
      expect(await store.readControl("run-w", "pause")).toEqual({ ok: true, request: null });
      expect(await other.withdrawControl("run-w", pause.request)).toEqual({ ok: true, withdrawn: false });
      // A newer pause filed meanwhile is not taken back by the older one's withdrawal; the stop is untouched.
      const newer = await other.requestControl("run-w", "pause", { reason: "again", now: () => "2026-01-02T03:04:06.000Z" });
      if (!newer.ok) throw newer.error;
      expect(await other.withdrawControl("run-w", pause.request)).toEqual({ ok: true, withdrawn: false });
      expect(await store.readControl("run-w", "pause")).toEqual({ ok: true, request: newer.request });
      expect(await store.readControl("run-w")).toEqual({ ok: true, request: stop.request });
      await held.lock.release();
    });

    it("an approve request carries its decision, is read only when asked for, and is never taken for a pause or stop", async () => {
      const store = await fresh();
      await store.writeMetadata("run-ap", { ...sampleMetadata("run-ap"), status: "running" }, null);
      const code = (r: { ok: boolean; error?: { code: string } }) => (r.ok ? "ok" : r.error?.code);
      expect(code(await store.requestControl("run-ap", "approve", {}))).toBe("INVALID_OPTIONS");
      expect(code(await store.requestControl("run-ap", "stop", { approval: { decision: "approve" } }))).toBe("INVALID_OPTIONS");
      const filed = await store.requestControl("run-ap", "approve", { reason: "ship it", approval: { name: "release", decision: "approve", data: { channel: "beta" } } });
      if (!filed.ok) throw filed.error;
      expect(filed.request).toMatchObject({ signal: "approve", approval: { name: "release", decision: "approve", data: { channel: "beta" } } });
      // What a runner reads at a step boundary: no pause or stop pending.
      expect(await store.readControl("run-ap")).toEqual({ ok: true, request: null });
      expect(await store.readControl("run-ap", "approve")).toEqual({ ok: true, request: filed.request });
      expect(await store.clearControl("run-ap", filed.request)).toEqual({ ok: true, cleared: true });
      expect(await store.readControl("run-ap", "approve")).toEqual({ ok: true, request: null });
    });

    it("refuses control requests for a missing or finished run, and a pause for a run nobody runs", async () => {
      const store = await fresh();
      const code = (r: { ok: boolean; error?: { code: string } }) => (r.ok ? "ok" : r.error?.code);
      expect(code(await store.requestControl("nobody", "stop"))).toBe("NOT_FOUND");
      expect(code(await store.requestControl("..", "stop"))).toBe("INVALID_SLUG");
      await store.writeMetadata("idle", { ...sampleMetadata("idle"), status: "running" }, null);
      const idle = await store.requestControl("idle", "pause");
      // One rule and one wording on every store (controlRefusal).
      expect(!idle.ok && idle.error).toMatchObject({ code: "NOT_RUNNING", message: expect.stringContaining("run idle cannot be paused: no process holds its lock (it crashed or ended).") });
      expect(code(await store.requestControl("idle", "stop"))).toBe("ok");
      await store.writeMetadata("paused", { ...sampleMetadata("paused"), status: "paused" }, null);
      expect(code(await store.requestControl("paused", "pause"))).toBe("NOT_RUNNING");
      for (const status of ["completed", "cancelled"] as const) {
        await store.writeMetadata(status, { ...sampleMetadata(status), status }, null);
        expect(code(await store.requestControl(status, "stop"))).toBe("RUN_FINISHED");
        expect(code(await store.requestControl(status, "pause"))).toBe("RUN_FINISHED");
        expect(await store.readControl(status)).toEqual({ ok: true, request: null });
      }
      expect(await store.readControl("idle", "pause")).toEqual({ ok: true, request: null });
    });

    it("gives the lock to one holder at a time and back after release", async () => {
      const store = await fresh();
      await store.writeMetadata("run-l", sampleMetadata("run-l"), null);
      const a = await store.lock("run-l", { owner: { tool: "a" } });
      if (!a.ok) throw a.error;
      const b = await store.lock("run-l", { owner: { tool: "b" } });
      expect(!b.ok && b.error.code).toBe("LOCKED");
      await a.lock.assertHeld();
      expect(a.lock.signal.aborted).toBe(false);
      expect(await a.lock.release()).toMatchObject({ ok: true, released: true });
      const c = await store.lock("run-l", { owner: { tool: "c" } });
      expect(c.ok).toBe(true);
      if (c.ok) await c.lock.release();
    });

    holderCases(fresh, harness, track);
    leaseEndCases(fresh, harness, track);
    journalPagingCases(fresh, harness, track);
  });
}
