import { describe, it, expect } from "vitest";
import { mkdtempSync, mkdirSync, writeFileSync, existsSync, readdirSync, symlinkSync, utimesSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import { processIdentity } from "../src/io/process-space.js";
import { tmpdir } from "node:os";
import path from "node:path";
import { gc } from "../src/store/retention.js";
import { acquirePlanLock } from "../src/lock/plan-lock.js";
import { writeWorkflowMetadata } from "../src/store/metadata.js";
import type { WorkflowStatus } from "../src/store/metadata-schema.js";
import { sampleMetadata } from "./helpers/metadata-fixtures.js";

const NOW = new Date("2026-03-01T00:00:00.000Z");
const DAY = 86_400_000;
const now = () => NOW;

async function run(planRoot: string, slug: string, status: WorkflowStatus, daysAgo: number): Promise<string> {
  const runDir = path.join(planRoot, slug);
  mkdirSync(runDir, { recursive: true });
  const updatedAt = new Date(NOW.getTime() - daysAgo * DAY).toISOString();
  const r = await writeWorkflowMetadata(path.join(runDir, "workflow.json"), { ...sampleMetadata(slug), status, updatedAt }, { expectedGeneration: null });
  if (!r.ok) throw r.error;
  return runDir;
}

const slugs = (entries: Array<{ slug: string }>) => entries.map((e) => e.slug).sort();
const reasonOf = (report: Awaited<ReturnType<typeof gc>>, slug: string) =>
  [...report.removed, ...report.kept].find((e) => e.slug === slug)?.reason;

describe("gc", () => {
  it("removes finished runs beyond the newest `keep`, and keeps running, paused and newer ones", async () => {
    const planRoot = mkdtempSync(path.join(tmpdir(), "phasekit-gc-"));
    await run(planRoot, "done-1", "completed", 1);
    await run(planRoot, "done-2", "cancelled", 2);
    await run(planRoot, "done-3", "failed", 3);
    await run(planRoot, "done-4", "completed", 4);
    await run(planRoot, "live", "running", 50);
    await run(planRoot, "paused", "paused", 60);
    const report = await gc({ planRoot, keep: 2, now });
    expect(slugs(report.removed)).toEqual(["done-3", "done-4"]);
    expect(report.removed.every((e) => e.reason === "beyond-keep")).toBe(true);
    expect(reasonOf(report, "done-1")).toBe("within-limits");
    expect(reasonOf(report, "live")).toBe("active");
    expect(reasonOf(report, "paused")).toBe("active");
    expect(readdirSync(planRoot).sort()).toEqual(["done-1", "done-2", "live", "paused"]);
  });

  it("removes finished runs older than `olderThan`; a dry run only reports", async () => {
    const planRoot = mkdtempSync(path.join(tmpdir(), "phasekit-gc-"));
    await run(planRoot, "old", "completed", 40);
    await run(planRoot, "recent", "completed", 5);
    const dry = await gc({ planRoot, olderThan: 30 * DAY, now, dryRun: true });
    expect(dry.removed).toMatchObject([{ slug: "old", reason: "older-than", status: "completed" }]);
    expect(existsSync(path.join(planRoot, "old"))).toBe(true);
    const real = await gc({ planRoot, olderThan: 30 * DAY, keep: 10, now });
    expect(slugs(real.removed)).toEqual(["old"]);
    expect(readdirSync(planRoot)).toEqual(["recent"]);
  });

  it("never removes a locked run, a corrupt or missing workflow.json, a symlink or a non-run name", async () => {
    const planRoot = mkdtempSync(path.join(tmpdir(), "phasekit-gc-"));
    const lockedDir = await run(planRoot, "locked", "completed", 90);
    const lock = await acquirePlanLock({ runDir: lockedDir, owner: { tool: "other" } });
    if (!lock.ok) throw lock.error;
    const corrupt = await run(planRoot, "corrupt", "completed", 90);
    writeFileSync(path.join(corrupt, "workflow.json"), '{"schemaVersion":1,"slug":');
    mkdirSync(path.join(planRoot, "no-meta"));
    mkdirSync(path.join(planRoot, "bad name"));
    const outside = await run(mkdtempSync(path.join(tmpdir(), "phasekit-gc-outside-")), "target", "completed", 90);
    symlinkSync(outside, path.join(planRoot, "linked"));
    const report = await gc({ planRoot, keep: 0, now });
    expect(report.removed).toEqual([]);
    expect(reasonOf(report, "locked")).toBe("locked");
    expect(reasonOf(report, "corrupt")).toBe("corrupt-metadata");
    expect(report.kept.find((e) => e.slug === "corrupt")?.error).toContain("workflow.json");
    expect(reasonOf(report, "no-meta")).toBe("no-metadata");
    expect(reasonOf(report, "bad name")).toBe("not-a-run");
    expect(existsSync(path.join(outside, "workflow.json"))).toBe(true);
    expect(readdirSync(planRoot).sort()).toEqual(["bad name", "corrupt", "linked", "locked", "no-meta"]);
    await lock.lock.release();
    // Once released, the same run goes.
    expect(slugs((await gc({ planRoot, keep: 0, now })).removed)).toEqual(["locked"]);
  });

  it("removes a finished run whose lock was left stale by a crashed holder", async () => {
    const planRoot = mkdtempSync(path.join(tmpdir(), "phasekit-gc-"));
    const runDir = await run(planRoot, "crashed", "failed", 10);
    const lockDir = path.join(runDir, ".lock");
    mkdirSync(lockDir);
    const token = "c".repeat(32);
    writeFileSync(path.join(lockDir, `holder-${token}.json`), JSON.stringify({ schemaVersion: 1, token, tool: "x", pid: 1, host: "h", since: "2020-01-01T00:00:00Z" }));
    const past = new Date(Date.now() - 600_000);
    utimesSync(lockDir, past, past);
    const report = await gc({ planRoot, keep: 0, now });
    expect(slugs(report.removed)).toEqual(["crashed"]);
    expect(readdirSync(planRoot)).toEqual([]);
  });

  it("removes a finished run whose crashed holder (a dead pid on this host) dated its lock an hour in the future", async () => {
    const planRoot = mkdtempSync(path.join(tmpdir(), "phasekit-gc-"));
    const runDir = await run(planRoot, "ahead", "completed", 10);
    const lockDir = path.join(runDir, ".lock");
    mkdirSync(lockDir);
    const token = "d".repeat(32);
    const dead = spawnSync(process.execPath, ["-e", "0"]).pid as number;
    const { bootId, pidNs } = processIdentity();
    writeFileSync(path.join(lockDir, `holder-${token}.json`), JSON.stringify({ schemaVersion: 1, token, tool: "x", pid: dead, host: hostname(), since: "2020-01-01T00:00:00Z", bootId, pidNs }));
    const future = new Date(Date.now() + 3_600_000);
    utimesSync(lockDir, future, future);
    const report = await gc({ planRoot, keep: 0, now });
    expect(slugs(report.removed)).toEqual(["ahead"]);
  });

  it("refuses options that would make no sense", async () => {
    await expect(gc({ planRoot: "/tmp", now })).rejects.toMatchObject({ code: "INVALID_OPTIONS" });
    await expect(gc({ planRoot: "/tmp", keep: -1, now })).rejects.toMatchObject({ code: "INVALID_OPTIONS" });
    expect(await gc({ planRoot: path.join(tmpdir(), "phasekit-gc-missing-root"), keep: 1, now })).toEqual({ removed: [], kept: [] });
  });
});
