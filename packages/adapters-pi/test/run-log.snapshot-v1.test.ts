import { describe, it, expect } from "vitest";
import { cpSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { openRunLog, type RunLog } from "../src/store/run-log/run-log.js";
import { readRunLog } from "../src/store/run-log/reader.js";

// Frozen: a run log whose snapshot has the first layout (`"v":1`: index lines in insertion order, no offset
// table), with a tail after the snapshot that overrides one step and adds another (written by the run log at
// 4b47da2: steps with inline and artifact outputs, a failed step, two states, events, a compaction, then a tail).
const FIXTURE = fileURLToPath(new URL("./fixtures/runlog-snapshot-v1", import.meta.url));

function copyOfFixture(): string {
  const runDir = path.join(mkdtempSync(path.join(tmpdir(), "phasekit-snapv1-")), "run");
  cpSync(FIXTURE, runDir, { recursive: true });
  return runDir;
}

const rerun = (): never => {
  throw new Error("a completed step was rerun");
};

async function expectFixtureContents(log: RunLog): Promise<void> {
  for (const i of [2, 3, 4, 5]) expect(await log.step(`step-${i}`, { i }, rerun)).toMatchObject({ reused: true, output: { i, text: `value ${i}` } });
  expect(await log.step("step-0", { i: 0, changed: true }, rerun)).toMatchObject({ reused: true, output: { i: 0, text: "changed" } });
  expect(await log.step("step-1", { i: 1, changed: true }, rerun)).toMatchObject({ reused: true, output: { i: 1, text: "overridden in the tail" } });
  expect(await log.step("é-ünïcode/key", { u: 1 }, rerun)).toMatchObject({ reused: true, output: "unicode key" });
  expect(await log.step("big", { b: 1 }, rerun)).toMatchObject({ reused: true, output: { blob: "x".repeat(500) } });
  expect(await log.step("tail", { t: 1 }, rerun)).toMatchObject({ reused: true, output: "after the snapshot" });
  expect(log.entry("failed")).toMatchObject({ status: "failed", error: "Error: boom", attempt: 1, startedAt: 1_700_000_017_000, at: 1_700_000_018_000 });
  expect(log.entry("step-2")).toMatchObject({ status: "completed", at: 1_700_000_006_000, startedAt: 1_700_000_005_000 });
  expect(log.entries().map((e) => e.key).sort()).toEqual(["big", "failed", "step-0", "step-1", "step-2", "step-3", "step-4", "step-5", "tail", "é-ünïcode/key"]);
  expect(log.state()).toEqual({ phase: "two", n: 2 });
  expect(log.events("control")).toEqual([{ pause: true }, { resume: true }]);
  expect(log.events("lifecycle")).toEqual([{ started: true }]);
}

describe("run log: snapshots of the first layout (frozen fixture)", () => {
  it("opens, reuses every output, and keeps state and events; a compaction rewrites it and nothing changes", async () => {
    const runDir = copyOfFixture();
    const view = await readRunLog(runDir);
    expect(view?.entries()).toHaveLength(10);
    view?.close();
    const a = await openRunLog({ runDir });
    await expectFixtureContents(a);
    await a.compact();
    await a.close();
    expect(readdirSync(path.join(runDir, "runlog")).filter((n) => n.startsWith("snap-"))).toHaveLength(1);
    const b = await openRunLog({ runDir });
    await expectFixtureContents(b);
    expect(await b.step("failed", { f: 1 }, () => "second try")).toMatchObject({ reused: false, reason: "failed", entry: { attempt: 2 } });
    await b.close();
  });
});
