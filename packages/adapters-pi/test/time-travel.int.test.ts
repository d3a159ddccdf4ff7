/**
 * Time travel on the file store, with real processes: `rerunFrom` marks a step and every later one to run again
 * in the same run (the next resume's side-effect log shows exactly those), and `forkRun` makes a new run that
 * reuses exactly the steps before the fork point, leaving the source's bytes untouched, even when killed mid-fork.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { pidSpaceTag } from "../src/io/process-space.js";
import { createFsPlanStore, forkRun, rerunFrom, type CheckpointStore, type PlanStore } from "../src/index.js";
import { openRunLog } from "../src/store/run-log/run-log.js";
import { readRunLog } from "../src/store/run-log/reader.js";
import { json, phasekit } from "./cli/helpers/run-cli.js";
import { spawnChild, spawnLines } from "./helpers/spawn-child.js";
import { createMemoryPlanStore } from "./helpers/memory-plan-store.js";
import { holdLock, useTempRepos } from "./helpers/temp-repos.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const RUNNER = path.join(here, "helpers", "time-travel-runner.mjs");
const FORKER = path.join(here, "helpers", "fork-killer.mjs");
const FINAL = "seed>a>b>c>d>e";
const tempRepo = useTempRepos("phasekit-time-travel-");

/** Runs (or resumes) the 5-step workflow in a child; returns its status, result and step reports. */
async function runChild(repo: string, slug: string, mode = ""): Promise<{ status: string; result: unknown; steps: Array<{ stepId: string; outcome: string; reason?: string }> }> {
  const child = spawnChild(RUNNER, [repo, slug, path.join(repo, "effects.log"), mode]);
  const exited = await child.exited;
  const pick = (p: string): string => (child.lines.find((l) => l.startsWith(`${p} `)) ?? `${p} null`).slice(p.length + 1);
  if (!child.lines.some((l) => l.startsWith("status "))) throw new Error(`runner ended without a status: ${exited.stderr}`);
  return { status: pick("status"), result: JSON.parse(pick("result")), steps: JSON.parse(pick("steps")) };
}

const effects = (repo: string): string[] => (existsSync(path.join(repo, "effects.log")) ? readFileSync(path.join(repo, "effects.log"), "utf8").trim().split("\n").map((l) => l.split(" ")[0] as string) : []);

/** Every file of a folder with its bytes' hash: equal before and after means nothing was written. */
function folderPrint(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = path.join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out[path.relative(dir, p)] = createHash("sha256").update(readFileSync(p)).digest("hex");
    }
  };
  walk(dir);
  return out;
}

describe("rerunFrom (file store, real processes)", () => {
  it("reruns the step and every later one at the next resume, reuses the rest, and keeps the evidence", async () => {
    const repo = tempRepo();
    expect((await runChild(repo, "r1")).status).toBe("completed");
    expect(effects(repo)).toEqual(["a", "b", "c", "d", "e"]);

    const marked = await rerunFrom({ repoRoot: repo, target: "r1", from: "c", reason: "try c again" });
    expect(marked).toEqual({ slug: "r1", from: "c", keys: ["c", "d", "e"] });

    const again = await runChild(repo, "r1");
    expect(again).toMatchObject({ status: "completed", result: FINAL });
    expect(effects(repo)).toEqual(["a", "b", "c", "d", "e", "c", "d", "e"]);
    expect(again.steps.map((s) => `${s.stepId}:${s.outcome}${s.outcome === "ran" ? `:${s.reason}` : ""}`)).toEqual(["a:reused", "b:reused", "c:ran:superseded", "d:ran:superseded", "e:ran:superseded"]);

    // The mark superseded only the records before it: a third resume reuses everything.
    expect((await runChild(repo, "r1")).status).toBe("completed");
    expect(effects(repo)).toHaveLength(8);
    const view = await readRunLog(path.join(repo, "ai_plan", "r1"));
    try {
      expect(view?.events("rerun")).toEqual([expect.objectContaining({ from: "c", keys: ["c", "d", "e"], reason: "try c again" })]);
    } finally {
      view?.close();
    }
  });

  it("a compaction between the mark and the resume keeps the steps superseded", async () => {
    const repo = tempRepo();
    await runChild(repo, "r2");
    await rerunFrom({ repoRoot: repo, target: "r2", from: "d" });
    const log = await openRunLog({ runDir: path.join(repo, "ai_plan", "r2") });
    await log.compact();
    expect(log.entry("d")?.superseded).toBe(true);
    expect(log.entry("c")?.superseded).toBeUndefined();
    await log.close();
    expect(await runChild(repo, "r2")).toMatchObject({ status: "completed", result: FINAL });
    expect(effects(repo)).toEqual(["a", "b", "c", "d", "e", "d", "e"]);
  });

  it("reruns a completed step before the one that failed", async () => {
    const repo = tempRepo();
    expect((await runChild(repo, "r3", "fail:c")).status).toBe("failed");
    await rerunFrom({ repoRoot: repo, target: "r3", from: "b" });
    expect(await runChild(repo, "r3")).toMatchObject({ status: "completed", result: FINAL });
    expect(effects(repo)).toEqual(["a", "b", "c", "b", "c", "d", "e"]);
  });

  it("is refused while the run is held, and for a step the history does not hold", async () => {
    const repo = tempRepo();
    await runChild(repo, "r4");
    await expect(rerunFrom({ repoRoot: repo, target: "r4", from: "zz" })).rejects.toMatchObject({ code: "NOT_FOUND", details: { value: "zz" } });
    const lock = await holdLock(repo, "r4");
    try {
      await expect(rerunFrom({ repoRoot: repo, target: "r4", from: "c" })).rejects.toMatchObject({ code: "LOCKED" });
    } finally {
      await lock.release();
    }
    await expect(rerunFrom({ repoRoot: repo, target: "nope", from: "c" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect((await runChild(repo, "r4")).steps.every((s) => s.outcome === "reused")).toBe(true);
  });
});

describe("forkRun (file store, real processes)", () => {
  it("makes a run that reuses exactly the steps before the fork point; the source's bytes are untouched", async () => {
    const repo = tempRepo();
    await runChild(repo, "src");
    const sourceDir = path.join(repo, "ai_plan", "src");
    const before = folderPrint(sourceDir);
    const fork = await forkRun({ repoRoot: repo, target: "src", at: "c", id: "f1" });
    expect(fork).toMatchObject({ slug: "f1", from: { slug: "src", at: "c" }, copied: ["a", "b"] });
    expect(folderPrint(sourceDir)).toEqual(before);

    const resumed = await runChild(repo, "f1");
    expect(resumed).toMatchObject({ status: "completed", result: FINAL });
    expect(effects(repo)).toEqual(["a", "b", "c", "d", "e", "c", "d", "e"]);
    expect(resumed.steps.map((s) => s.outcome)).toEqual(["reused", "reused", "ran", "ran", "ran"]);
    expect(folderPrint(sourceDir)).toEqual(before);
    const journal = await createFsPlanStore({ repoRoot: repo }).readJournal("f1");
    expect(journal.ok && journal.entries.some((e) => e.event === "forked" && (e.data as { from?: string }).from === "src")).toBe(true);
  });

  it("refuses an id that exists and a step the source does not hold", async () => {
    const repo = tempRepo();
    await runChild(repo, "src");
    await expect(forkRun({ repoRoot: repo, target: "src", at: "c", id: "src" })).rejects.toMatchObject({ code: "INVALID_OPTIONS", details: { field: "id" } });
    await expect(forkRun({ repoRoot: repo, target: "src", at: "zz" })).rejects.toMatchObject({ code: "NOT_FOUND", details: { field: "at" } });
    await expect(forkRun({ repoRoot: repo, target: "src", at: "c", id: "../x" })).rejects.toMatchObject({ code: "INVALID_SLUG" });
  });

  it.each([0, 1])("SIGKILL after %i copied step(s) leaves the source untouched and no run that could resume half-copied", async (after) => {
    const repo = tempRepo();
    await runChild(repo, "src");
    const sourceDir = path.join(repo, "ai_plan", "src");
    const before = folderPrint(sourceDir);
    const child = spawnLines(process.execPath, [FORKER, repo, "src", "d", "f2"]);
    for (let i = 0; i < after; i++) {
      await child.next(/^copied /, i === 0);
      child.send("go");
    }
    await child.waitFor(new RegExp(`^copied ${["a", "b"][after]}$`));
    child.proc.kill("SIGKILL");
    expect((await child.exited).signal).toBe("SIGKILL");
    expect(folderPrint(sourceDir)).toEqual(before);
    expect(existsSync(path.join(repo, "ai_plan", "f2"))).toBe(false);
    const listed = await createFsPlanStore({ repoRoot: repo }).list();
    expect(listed.map((r) => r.slug)).toEqual(["src"]);
    // What the killed fork left is a hidden folder, never a run; the next fork removes it (its process is gone).
    const hidden = () => readdirSync(path.join(repo, "ai_plan")).filter((n) => n.startsWith(".fork-"));
    expect(hidden()).toEqual([expect.stringMatching(new RegExp(`^\\.fork-f2-${child.proc.pid}-${pidSpaceTag()}-[0-9a-f]{8}$`))]);
    // The same fork again completes, and its resume reruns only d and e.
    await forkRun({ repoRoot: repo, target: "src", at: "d", id: "f2" });
    expect(hidden()).toEqual([]);
    expect(await runChild(repo, "f2")).toMatchObject({ status: "completed", result: FINAL });
    expect(effects(repo)).toEqual(["a", "b", "c", "d", "e", "d", "e"]);
  });
});

describe("phasekit fork / rerun (the bin)", () => {
  it("rerun --from marks the steps, why says so, and the next resume runs exactly them; fork --at makes the run", async () => {
    const repo = tempRepo();
    await runChild(repo, "r6");
    const marked = phasekit(["--repo", repo, "rerun", "r6", "--from", "d", "--json", "checking", "d"]);
    expect(marked.code, marked.stderr).toBe(0);
    expect(json(marked.stdout, "phasekit.time-travel/1")).toMatchObject({ id: "r6", action: "rerun", from: "d", steps: ["d", "e"] });
    const why = phasekit(["--repo", repo, "why", "r6", "d", "--json"]);
    expect(why.stdout).toContain("superseded");
    expect((await runChild(repo, "r6")).status).toBe("completed");
    expect(effects(repo)).toEqual(["a", "b", "c", "d", "e", "d", "e"]);

    const forked = phasekit(["--repo", repo, "fork", "r6", "--at", "b", "--id", "f6"]);
    expect(forked.code, forked.stderr).toBe(0);
    expect(forked.stdout).toContain("forked run r6 at b into f6: 1 step(s)");
    expect(await runChild(repo, "f6")).toMatchObject({ status: "completed", result: FINAL });
    // why tells a copied step from one the fork ran itself.
    expect(json(phasekit(["--repo", repo, "why", "f6", "a", "--json"]).stdout, "phasekit.why/1")).toMatchObject({ forkedFrom: { run: "r6", at: "b" } });
    expect(phasekit(["--repo", repo, "why", "f6", "a"]).stdout).toContain("copied from run r6 when this run was forked from it at b");
    expect(json(phasekit(["--repo", repo, "why", "f6", "c", "--json"]).stdout, "phasekit.why/1")).toMatchObject({ forkedFrom: null });
    expect(effects(repo).slice(7)).toEqual(["b", "c", "d", "e"]);

    expect(phasekit(["--repo", repo, "fork", "r6", "--at", "zz", "--json"]).code).toBe(3);
    expect(phasekit(["--repo", repo, "rerun", "r6"]).code).toBe(2);
    const busy = await holdLock(repo, "r6");
    try {
      expect(phasekit(["--repo", repo, "rerun", "r6", "--from", "a"]).code).toBe(4);
    } finally {
      await busy.release();
    }
  });
});

describe("rerunFrom on a store without rerun marks", () => {
  it("is UNSUPPORTED (typed, naming the run), and the run is left as it was", async () => {
    // A backend whose checkpoints cannot supersede (the memory store's can: it is the engine's over its port).
    const memory = createMemoryPlanStore();
    const withoutMarks = async (slug: string, options: Parameters<PlanStore["checkpoints"]>[1]): Promise<CheckpointStore> => {
      const { supersede: _, ...rest } = await memory.checkpoints(slug, options);
      return rest;
    };
    const store: PlanStore = Object.assign(Object.create(memory) as PlanStore, {
      checkpoints: withoutMarks,
      lock: async (...args: Parameters<PlanStore["lock"]>) => {
        const r = await memory.lock(...args);
        if (r.ok && r.lock.store !== undefined) {
          const held = r.lock.store;
          const heldWithout = async (slug: string, options: Parameters<PlanStore["checkpoints"]>[1]): Promise<CheckpointStore> => {
            const { supersede: _, ...rest } = await held.checkpoints(slug, options);
            return rest;
          };
          return { ...r, lock: Object.assign(Object.create(r.lock) as typeof r.lock, { store: Object.assign(Object.create(held) as PlanStore, { checkpoints: heldWithout }) }) };
        }
        return r;
      },
    });
    const at = new Date().toISOString();
    const w = await store.writeMetadata("m1", { slug: "m1", ownerTool: "t", currentTool: "t", status: "paused", createdAt: at, updatedAt: at }, null);
    expect(w.ok).toBe(true);
    await expect(rerunFrom({ store, target: "m1", from: "a" })).rejects.toMatchObject({ code: "UNSUPPORTED", details: { value: "m1" } });
    const after = await store.readMetadata("m1");
    expect(after.ok && after.metadata?.generation).toBe(1);
    // The lock was released: another holder takes it at once.
    const again = await store.lock("m1", { owner: { tool: "t" }, retries: 0 });
    expect(again.ok).toBe(true);
    if (again.ok) await again.lock.release();
  });
});
