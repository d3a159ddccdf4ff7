/**
 * How many fdatasync calls steps cost, counted at the run log's file-system boundary (not timed): steps that end in
 * the same turn share one sync; a step that ends while no other is open syncs at once, one sync each; and every
 * acknowledged step is in the log when it is opened again.
 */
import { describe, expect, it } from "vitest";
import { mkdtempSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { openRunLog, type RunLog } from "../src/store/run-log/run-log.js";

const temp = (): string => mkdtempSync(path.join(tmpdir(), "phasekit-group-commit-"));

describe("run log: syncs per step", () => {
  it("parallel steps ending in one turn share a sync; sequential ones sync once each", async () => {
    const runDir = temp();
    const calls: string[] = [];
    const log = await openRunLog({ runDir, beforeFsCall: (name) => void calls.push(name) });
    const syncs = (): number => calls.filter((c) => c === "fdatasync").length;

    let before = syncs();
    await Promise.all(Array.from({ length: 8 }, (_, i) => log.step(`p${i}`, { i }, () => ({ i }))));
    expect(syncs() - before).toBe(1);

    before = syncs();
    for (let i = 0; i < 5; i++) await log.step(`s${i}`, { i }, () => ({ i }));
    expect(syncs() - before).toBe(5);

    // A lone step whose end is synced at once, then one more started while it is still open: both acknowledged.
    before = syncs();
    let letGo!: () => void;
    const gate = new Promise<void>((r) => (letGo = r));
    const slow = log.step("slow", {}, async () => (await gate, "slow"));
    const fast = await log.step("fast", {}, () => "fast");
    letGo();
    expect(await slow).toMatchObject({ reused: false, output: "slow" });
    expect(fast).toMatchObject({ reused: false, output: "fast" });
    expect(syncs() - before).toBe(2);
    await log.close();

    const again = await openRunLog({ runDir });
    for (const k of [...Array.from({ length: 8 }, (_, i) => `p${i}`), ...Array.from({ length: 5 }, (_, i) => `s${i}`), "slow", "fast"]) {
      expect(again.entry(k)?.status, k).toBe("completed");
    }
    await again.close();
  });

  it("step ends queued to share a sync when the log closes are refused with the log's LOCK_LOST, and nothing is written after the close", async () => {
    const runDir = temp();
    const log = await openRunLog({ runDir });
    let inside = 0;
    let entered!: () => void;
    const both = new Promise<void>((r) => (entered = r));
    let letGo!: () => void;
    const gate = new Promise<void>((r) => (letGo = r));
    const body = (k: string) => async (): Promise<string> => {
      if (++inside === 2) entered();
      await gate;
      return k;
    };
    const ends = ["a", "b"].map((k) => log.step(k, {}, body(k)).then(() => "acknowledged", (e: unknown) => e));
    await both;
    // Registered before the bodies resume: this check-phase callback runs after both ends are queued (microtasks)
    // and before the writer's own turn that would write and sync them together.
    let closed!: Promise<void>;
    const closing = new Promise<void>((r) => setImmediate(() => ((closed = log.close()), r())));
    letGo();
    await closing;
    await closed;
    const files = (): string[] => readdirSync(path.join(runDir, "runlog")).map((f) => `${f}:${statSync(path.join(runDir, "runlog", f)).size}`);
    const atClose = files();
    for (const end of await Promise.all(ends)) {
      expect(end).toMatchObject({ code: "LOCK_LOST", details: { field: "epoch" }, message: expect.stringMatching(/run log of epoch \d+ .* is closed/) });
    }
    expect(files()).toEqual(atClose);
    const again = await openRunLog({ runDir });
    expect(["a", "b"].map((k) => again.entry(k)?.status)).toEqual(["started", "started"]);
    await again.close();
  });

  it("closed at every fs boundary of parallel steps sharing syncs: every acknowledged step is in the history, every other end is a typed refusal, nothing is written after the close", async () => {
    /** Four parallel steps then two sequential ones; the log closes at fs boundary `closeAt` (0: never). */
    const stepsClosedAt = async (runDir: string, closeAt: number) => {
      let n = 0;
      let closing: Promise<void> | undefined;
      let log: RunLog | undefined;
      let atClose: string[] | undefined;
      const close = (l: RunLog | undefined) => l?.close().then(() => void (atClose = files(runDir)));
      log = await openRunLog({ runDir, beforeFsCall: () => void (++n === closeAt && (closing = close(log))) });
      n = 0; // counted from the first step on
      const acknowledged: string[] = [];
      const refused: unknown[] = [];
      const step = (k: string) =>
        (log as RunLog).step(k, { k }, () => k).then(
          () => void acknowledged.push(k),
          (e: unknown) => void refused.push(e),
        );
      await Promise.all(["p0", "p1", "p2", "p3"].map(step));
      for (const k of ["s0", "s1"]) await step(k);
      await (closing ?? close(log));
      return { boundaries: n, acknowledged, refused, atClose: atClose as string[] };
    };
    const files = (runDir: string): string[] => readdirSync(path.join(runDir, "runlog")).map((f) => `${f}:${statSync(path.join(runDir, "runlog", f)).size}`);
    const probe = await stepsClosedAt(temp(), 0);
    expect(probe.acknowledged).toHaveLength(6);
    expect(probe.boundaries).toBeGreaterThan(8);
    for (let k = 1; k <= probe.boundaries; k++) {
      const runDir = temp();
      const { acknowledged, refused, atClose } = await stepsClosedAt(runDir, k);
      // Every end settled, and the folder is as the close left it.
      expect(files(runDir), `boundary ${k}`).toEqual(atClose);
      expect(acknowledged.length + refused.length, `boundary ${k}`).toBe(6);
      for (const e of refused) expect(e, `boundary ${k}`).toMatchObject({ name: "WorkflowError", code: "LOCK_LOST" });
      const again = await openRunLog({ runDir });
      for (const key of acknowledged) expect(again.entry(key)?.status, `boundary ${k}: ${key}`).toBe("completed");
      await again.close();
    }
  });
});
