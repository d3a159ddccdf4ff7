/**
 * The engine over the entry port (engine/entry-history.ts), on the memory backend (the one that implements only
 * that port): fencing by epoch, what compaction keeps (each step's latest entry with its epoch, every rerun mark,
 * the outputs completed records name) and that reuse, marks and attempts read the same after it.
 */
import { describe, expect, it } from "vitest";
import { checkpointsOver } from "../src/engine/checkpoints.js";
import { historyOverEntries } from "../src/engine/entry-history.js";
import type { EntryPort } from "../src/engine/entry-port.js";
import { claimEpoch, memoryEntryPort, newMemoryHistory } from "../src/testing/memory-history.js";

const now = (): Date => new Date("2026-03-01T00:00:00.000Z");
const anyone = (): void => undefined;

async function lease(history: ReturnType<typeof newMemoryHistory>, epochs: { epoch: number }) {
  const epoch = claimEpoch(epochs);
  const port = memoryEntryPort("r", history, epochs);
  return checkpointsOver(await historyOverEntries(port, { run: "r", epoch, now, mayWrite: anyone }));
}

describe("the engine over the entry port", () => {
  it("a displaced lease's appends are refused by the port's epoch fence, and its body never starts", async () => {
    const history = newMemoryHistory();
    const epochs = { epoch: 0 };
    const old = await lease(history, epochs);
    await old.step("a", {}, () => 1);
    const fresh = await lease(history, epochs);
    let ran = false;
    await expect(
      old.step("b", {}, () => {
        ran = true;
        return 2;
      }),
    ).rejects.toMatchObject({ code: "LOCK_LOST" });
    expect(ran).toBe(false);
    expect(await fresh.step("a", {}, () => 99)).toMatchObject({ reused: true, output: 1 });
    expect((await fresh.records()).map((r) => r.stepId)).toEqual(["a"]);
  });

  it("compaction keeps each step's latest entry, every mark and the outputs still named; reuse and marks read the same after it", async () => {
    const history = newMemoryHistory();
    const epochs = { epoch: 0 };
    const first = await lease(history, epochs);
    await first.step("a", { v: 1 }, () => ({ big: "a".repeat(100) }));
    await first.step("a", { v: 2 }, () => ({ big: "A".repeat(100) }));
    await first.step("b", {}, () => "b1");
    await first.recordCommitIntent({ id: "c1", message: "m", files: ["x"] });
    await first.markCommitted("c1", { sha: "abcdef1" });
    const marker = await lease(history, epochs);
    expect(await marker.supersede?.("b", {})).toEqual({ keys: ["b"] });
    const holder = await lease(history, epochs);
    const report = await holder.compact();
    expect(report).toEqual({ recordsBefore: 9, recordsAfter: 4, artifactsRemoved: 1 });
    expect(history.entries.map((s) => s.entry.t)).toEqual(["done", "done", "commit", "rerun"]);
    expect((await holder.records()).map((r) => [r.stepId, r.status, r.superseded ?? false])).toEqual([
      ["a", "completed", false],
      ["b", "completed", true],
    ]);
    expect(await holder.step("a", { v: 2 }, () => "ran")).toMatchObject({ reused: true, output: { big: "A".repeat(100) } });
    expect(await holder.step("b", {}, () => "b2")).toMatchObject({ reused: false, reason: "superseded", output: "b2" });
    expect(await holder.commits()).toEqual([expect.objectContaining({ id: "c1", status: "committed", sha: "abcdef1" })]);
  });

  it("a damaged commit entry is CORRUPT_FILE naming the history and the entry's position, never skipped", async () => {
    const history = newMemoryHistory();
    const epochs = { epoch: 0 };
    const cps = await lease(history, epochs);
    await cps.recordCommitIntent({ id: "c1", message: "m", files: ["a.ts"] });
    const planted = history.entries.at(-1) as { pos: number; entry: { record: Record<string, unknown> } };
    planted.entry.record = { ...planted.entry.record, files: "a.ts" };
    await expect((await lease(history, epochs)).commits()).rejects.toMatchObject({ code: "CORRUPT_FILE", details: { file: expect.stringContaining("r"), entry: planted.pos, field: "files" } });
  });

  it("compaction keeps spends: a spent mark reads spent after it, and a later mark makes the step pending again", async () => {
    const history = newMemoryHistory();
    const epochs = { epoch: 0 };
    const first = await lease(history, epochs);
    for (const k of ["a", "b"]) await first.step(k, {}, () => k);
    await (await lease(history, epochs)).supersede?.("a", {});
    const ender = await lease(history, epochs);
    await ender.step("a", {}, () => "a2");
    expect(await ender.spendRerunMarks?.()).toEqual({ keys: ["b"] });
    // Nothing left to spend: a second end writes nothing.
    const entries = history.entries.length;
    expect(await ender.spendRerunMarks?.()).toEqual({ keys: [] });
    expect(history.entries.length).toBe(entries);
    await ender.compact();
    const flags = async () => (await (await lease(history, epochs)).records()).map((r) => [r.stepId, r.superseded ?? false, r.rerunSpent ?? false]);
    expect(await flags()).toEqual([["a", false, false], ["b", true, true]]);
    await (await lease(history, epochs)).supersede?.("b", {});
    expect(await flags()).toEqual([["a", false, false], ["b", true, false]]);
  });

  it("compaction keeps the order the run first recorded its steps in: a rerun from a step after it marks only the later ones", async () => {
    const history = newMemoryHistory();
    const epochs = { epoch: 0 };
    const first = await lease(history, epochs);
    for (const k of ["a", "b", "c"]) await first.step(k, {}, () => k);
    // a runs again (a new input): its latest entry is now the last one of the history.
    await first.step("a", { changed: true }, () => "a2");
    await first.compact();
    const again = await lease(history, epochs);
    expect((await again.records()).map((r) => r.stepId)).toEqual(["a", "b", "c"]);
    expect(await (await lease(history, epochs)).supersede?.("b", {})).toEqual({ keys: ["b", "c"] });
  });

  it("a stored output that fails its check reruns as artifact-corrupt; a missing one as artifact-missing", async () => {
    const history = newMemoryHistory();
    const epochs = { epoch: 0 };
    const first = await lease(history, epochs);
    const a = await first.step("a", {}, () => ({ n: 1 }));
    await first.step("b", {}, () => ({ n: 2 }));
    history.blobs.set(a.record.outputFingerprint as string, '{"n":666}');
    const b = (await first.record("b"))?.outputFingerprint as string;
    history.blobs.delete(b);
    const next = await lease(history, epochs);
    expect(await next.step("a", {}, () => ({ n: 1 }))).toMatchObject({ reused: false, reason: "artifact-corrupt" });
    expect(await next.step("b", {}, () => ({ n: 2 }))).toMatchObject({ reused: false, reason: "artifact-missing" });
    expect(await next.step("a", {}, () => "again")).toMatchObject({ reused: true, output: { n: 1 } });
  });
  it("a compaction while a step's append is on its way keeps that step's entry and output (the step is acknowledged after)", async () => {
    const history = newMemoryHistory();
    const epochs = { epoch: 0 };
    const epoch = claimEpoch(epochs);
    const memory = memoryEntryPort("r", history, epochs);
    // A backend whose append has landed but not yet answered (a network round trip): "done" entries wait at a gate.
    let landed!: () => void;
    const appended = new Promise<void>((resolve) => (landed = resolve));
    let answer!: () => void;
    const gate = new Promise<void>((resolve) => (answer = resolve));
    const port: EntryPort = {
      ...memory,
      async append(e, entries) {
        await memory.append(e, entries);
        if (entries.some((x) => x.t === "done")) {
          landed();
          await gate;
        }
      },
    };
    const store = checkpointsOver(await historyOverEntries(port, { run: "r", epoch, now, mayWrite: anyone }));
    const step = store.step("a", {}, () => ({ out: 1 }));
    await appended;
    const compaction = store.compact();
    answer();
    await compaction;
    expect(await step).toMatchObject({ reused: false, output: { out: 1 } });
    expect(history.entries.map((s) => [s.entry.t, "key" in s.entry ? s.entry.key : ""])).toEqual([["done", "a"]]);
    const next = await lease(history, epochs);
    expect(await next.step("a", {}, () => "ran again")).toMatchObject({ reused: true, output: { out: 1 } });
  });
});
