import { describe, it, expect } from "vitest";
import { pidSpaceTag } from "../src/io/process-space.js";
import { mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { lockDirOf } from "../src/lock/holder.js";
import { createFsPlanStore } from "../src/store/plan-store.js";
import { runPlanStoreContract } from "./contract/plan-store-contract.js";
import { createMemoryPlanStore, type MemoryPlanStore } from "./helpers/memory-plan-store.js";
import { sampleMetadata } from "./helpers/metadata-fixtures.js";

runPlanStoreContract("fs", async () => createFsPlanStore({ repoRoot: await mkdtemp(path.join(tmpdir(), "phasekit-store-")) }), {
  reopen: async (store) => createFsPlanStore({ repoRoot: store.planRoot, planRoot: store.planRoot }),
  // The lock folder gone (a stale-lock breaker took it): the holder notices only at its next heartbeat.
  loseLock: (store, slug) => rm(lockDirOf(path.join(store.planRoot, slug)), { recursive: true, force: true }),
});
runPlanStoreContract("memory", async () => createMemoryPlanStore(), {
  reopen: async (store) => (store as MemoryPlanStore).reopen(),
  loseLock: async (store, slug) => (store as MemoryPlanStore).expireLock(slug),
  stall: async (store, slug) => (store as MemoryPlanStore).expireLock(slug),
});

describe("fs plan store specifics", () => {
  it("lays a run out as <repo>/ai_plan/<slug>/{workflow.json,runlog/}, folders 0700, files 0600; no journal file is written", async () => {
    const repoRoot = await mkdtemp(path.join(tmpdir(), "phasekit-store-"));
    const store = createFsPlanStore({ repoRoot });
    await store.writeMetadata("run-x", sampleMetadata("run-x"), null);
    await store.close();
    const dir = path.join(repoRoot, "ai_plan", "run-x");
    expect(store.planRoot).toBe(path.join(repoRoot, "ai_plan"));
    expect((await readdir(dir)).sort()).toEqual(["runlog", "workflow.json"]);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(path.join(dir, "runlog"))).mode & 0o777).toBe(0o700);
    for (const f of await readdir(path.join(dir, "runlog"))) expect((await stat(path.join(dir, "runlog", f))).mode & 0o777).toBe(0o600);
    expect((await stat(path.join(dir, "workflow.json"))).mode & 0o777).toBe(0o600);
  });
  it("removes temp files left by a dead writer when a run is first opened", async () => {
    const repoRoot = await mkdtemp(path.join(tmpdir(), "phasekit-store-"));
    const store = createFsPlanStore({ repoRoot });
    await store.writeMetadata("run-t", sampleMetadata("run-t"), null);
    await store.close();
    const dir = path.join(repoRoot, "ai_plan", "run-t");
    await writeFile(path.join(dir, `.workflow.json.999999999-${pidSpaceTag()}.0123456789ab.tmp`), "half");
    const again = createFsPlanStore({ repoRoot });
    const w = await again.writeMetadata("run-t", sampleMetadata("run-t", 1), 1);
    await again.close();
    expect(w.ok).toBe(true);
    expect((await readdir(dir)).sort()).toEqual(["runlog", "workflow.json"]);
  });
  it("continues the journal's seq across store instances (another process took over)", async () => {
    const repoRoot = await mkdtemp(path.join(tmpdir(), "phasekit-store-"));
    const a = createFsPlanStore({ repoRoot });
    const b = createFsPlanStore({ repoRoot });
    await a.writeMetadata("run-s", sampleMetadata("run-s", 0), null);
    await b.writeMetadata("run-s", sampleMetadata("run-s", 1), 1);
    await a.writeMetadata("run-s", sampleMetadata("run-s", 2), 2);
    const j = await b.readJournal("run-s");
    await a.close();
    await b.close();
    expect(j.ok && j.entries.map((e) => [e.seq, e.generation])).toEqual([[1, 1], [2, 2], [3, 3]]);
  });
  it("refuses unusable options at creation", () => {
    expect(() => createFsPlanStore({ repoRoot: "" })).toThrow(/repoRoot/);
  });
});
