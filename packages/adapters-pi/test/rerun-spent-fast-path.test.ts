/**
 * A run's end spends the rerun marks of the steps it did not reach (engine/rerun-spent.ts). A history that never
 * held a mark has nothing to spend: the end asks the run log whether it holds any mark and reads no step record
 * then (reading them all cost 12–18 ms at the end of a 10,000-step run). Once a mark exists, the records are read.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { checkpointsOverRunLog } from "../src/store/log-checkpoints.js";
import { openRunLog } from "../src/store/run-log/run-log.js";

describe("spending rerun marks at a run's end", () => {
  it("reads no step record when the history never held a mark, and reads them once it does", async () => {
    const runDir = mkdtempSync(path.join(tmpdir(), "pk-spend-fast-"));
    // Each opening is a lease of its own (a new epoch), as runWorkflow and rerunFrom take them.
    const open = async () => {
      const log = await openRunLog({ runDir });
      const counted = { reads: 0 };
      const entries = log.entries.bind(log);
      log.entries = () => (counted.reads++, entries());
      return { log, counted, cps: checkpointsOverRunLog(log, () => new Date()) };
    };
    const first = await open();
    for (const id of ["a", "b", "c"]) await first.cps.step(id, {}, () => id);
    expect(first.log.hasRerunMarks()).toBe(false);
    expect(await first.cps.spendRerunMarks?.()).toEqual({ keys: [] });
    expect(first.counted.reads).toBe(0);
    await first.log.close();

    const rerun = await open();
    expect(await rerun.cps.supersede?.("b", {})).toEqual({ keys: ["b", "c"] });
    await rerun.log.close();

    const ender = await open();
    expect(ender.log.hasRerunMarks()).toBe(true);
    await ender.cps.step("b", {}, () => "b2");
    expect(await ender.cps.spendRerunMarks?.()).toEqual({ keys: ["c"] });
    expect(ender.counted.reads).toBeGreaterThan(0);
    // Spent, the mark is still held: a later end reads the records again and finds nothing to spend.
    expect(ender.log.hasRerunMarks()).toBe(true);
    expect(await ender.cps.spendRerunMarks?.()).toEqual({ keys: [] });
    await ender.log.close();
  });
});
