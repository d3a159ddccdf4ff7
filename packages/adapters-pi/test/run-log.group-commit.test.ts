/**
 * How many fdatasync calls steps cost, counted at the run log's file-system boundary (not timed): steps that end in
 * the same turn share one sync; a step that ends while no other is open syncs at once, one sync each; and every
 * acknowledged step is in the log when it is opened again.
 */
import { describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { openRunLog } from "../src/store/run-log/run-log.js";

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
});
