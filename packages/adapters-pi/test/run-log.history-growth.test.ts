import { mkdtempSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { isWorkflowError } from "@phasekit/core";
import { openRunLog } from "../src/store/run-log/run-log.js";
import { readRunLog } from "../src/store/run-log/reader.js";
import { runWorkflow } from "../src/index.js";
import { useTempRepos } from "./helpers/temp-repos.js";

const temp = (): string => mkdtempSync(path.join(tmpdir(), "phasekit-growth-"));
const history = (runDir: string): string[] => readdirSync(path.join(runDir, "runlog")).sort();
const CYCLES = 1_000;

describe("a history that grows with change, not with acquisitions", () => {
  it(`${CYCLES} open/close cycles that write nothing leave no file`, async () => {
    const runDir = temp();
    const first = await openRunLog({ runDir });
    await first.step("s", {}, () => "v");
    await first.close();
    const before = history(runDir);
    for (let i = 0; i < CYCLES; i++) {
      const log = await openRunLog({ runDir });
      await log.step("s", {}, () => "rerun"); // a reuse hit writes nothing
      await log.close();
    }
    expect(history(runDir)).toEqual(before);
  }, 60_000);

  it(`${CYCLES} open/close cycles with a write each leave at most 8 files, and the history is whole`, async () => {
    const runDir = temp();
    let most = 0;
    for (let i = 0; i < CYCLES; i++) {
      const log = await openRunLog({ runDir });
      await log.step(`s${i % 10}`, { i: i % 10 }, () => ({ i }));
      await log.putState({ n: i });
      await log.close();
      most = Math.max(most, history(runDir).length);
    }
    expect(most).toBeLessThanOrEqual(8);
    const view = await readRunLog(runDir);
    try {
      expect(view?.state()).toEqual({ n: CYCLES - 1 });
      expect(view?.entries().map((e) => e.key).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `s${i}`));
      const s3 = view?.entry("s3");
      expect(s3 === undefined ? undefined : JSON.parse((await view?.outputText(s3)) ?? "null")).toEqual({ i: 3 });
    } finally {
      view?.close();
    }
  }, 60_000);

  it("a claim that writes nothing still fences the holder it displaced while it holds the run", async () => {
    const runDir = temp();
    const a = await openRunLog({ runDir });
    await a.step("kept", {}, () => "acknowledged");
    const b = await openRunLog({ runDir });
    const late = await a.step("late", {}, () => "never acknowledged").then(() => null, (e: unknown) => e);
    expect(isWorkflowError(late, "LOCK_LOST")).toBe(true);
    expect(b.entry("kept")?.status).toBe("completed");
    await b.close();
    await a.close();
    const view = await readRunLog(runDir);
    expect(view?.entry("kept")?.status).toBe("completed");
    expect(view?.entry("late")?.status).not.toBe("completed");
    view?.close();
  });

  it("closing a long segment folds it: one copy of the outputs remains, not the segment and a snapshot of it", async () => {
    const runDir = temp();
    const log = await openRunLog({ runDir });
    // Each output unlike the one before it (no delta pays): the segment holds every output whole.
    const pad = "x".repeat(10 * 1024);
    for (let i = 0; i < 500; i++) await log.step(`s${i}`, { i }, () => ({ i, pad: `${i % 10}${pad.slice(1)}` }));
    await log.close();
    const bytes = history(runDir).reduce((sum, name) => sum + statSync(path.join(runDir, "runlog", name)).size, 0);
    const outputs = 500 * (pad.length + 20);
    expect(bytes).toBeGreaterThan(outputs);
    expect(bytes).toBeLessThan(outputs * 1.2);
    const again = await openRunLog({ runDir });
    const hit = await again.step("s499", { i: 499 }, () => ({ i: -1, pad: "" }));
    expect(hit).toMatchObject({ reused: true, output: { i: 499 } });
    await again.close();
  }, 60_000);

  it("a holder that compacted a 2 MB segment leaves one copy when it closes, not its segment beside the snapshot", async () => {
    const runDir = temp();
    const log = await openRunLog({ runDir });
    const pad = "y".repeat(10 * 1024);
    for (let i = 0; i < 200; i++) await log.step(`s${i}`, { i }, () => ({ i, pad: `${i % 10}${pad.slice(1)}` }));
    await log.compact();
    await log.close();
    const bytes = history(runDir).reduce((sum, name) => sum + statSync(path.join(runDir, "runlog", name)).size, 0);
    expect(bytes).toBeLessThan(200 * (pad.length + 20) * 1.2);
    const again = await openRunLog({ runDir });
    expect(await again.step("s7", { i: 7 }, () => ({ i: -1, pad: "" }))).toMatchObject({ reused: true, output: { i: 7 } });
    await again.close();
  });
});

describe("runWorkflow calls refused on a finished run leave no file", () => {
  const repo = useTempRepos("pk-growth-");
  it("300 calls refused with RUN_FINISHED", async () => {
    const root = repo();
    await runWorkflow({ repoRoot: root, target: "done", toolName: "t" }, async (ctx) => ctx.step("s", {}, () => "v"));
    const runDir = path.join(root, "ai_plan", "done");
    const before = history(runDir);
    for (let i = 0; i < 300; i++) {
      const refused = await runWorkflow({ repoRoot: root, target: "done", toolName: "t" }, async () => "again").then(() => null, (e: unknown) => e);
      expect(isWorkflowError(refused, "RUN_FINISHED")).toBe(true);
    }
    expect(history(runDir)).toEqual(before);
  }, 60_000);
});
