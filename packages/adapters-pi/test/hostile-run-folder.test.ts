/**
 * Every file of a run folder replaced by a symlink out of the plan root, a FIFO, or a 600 MB sparse file: the
 * next run settles (never hangs), fails with a typed error naming the file or carries on without it, and the
 * planted thing and whatever it points to are left exactly as they were.
 */
import { describe, expect, it } from "vitest";
import { lstatSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { isWorkflowError } from "@phasekit/core";
import { runWorkflow } from "@phasekit/adapters-pi";
import { useTempRepos } from "./helpers/temp-repos.js";
import { foreignIntact, plant, type Hostile } from "./hostile/fixtures.js";

const repo = useTempRepos("pk-hostile-");
const FILES = ["workflow.json", "runlog", "runlog/0000000001.seg", "journal.ndjson", "pause-request.json", "stop-request.json"];
// Outputs past the run log's inline limit (64 KiB) are stored as artifacts.
const BIG = "A".repeat(70 * 1024);
const KINDS: Hostile[] = ["symlink", "fifo", "huge"];

async function settleWithin<T>(p: Promise<T>, ms: number): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`HUNG for ${ms} ms`)), ms)));
  try {
    return { ok: true, value: await Promise.race([p, hang]) };
  } catch (error) {
    return { ok: false, error };
  } finally {
    clearTimeout(timer);
  }
}

function kindAt(file: string): string {
  const st = lstatSync(file);
  return st.isSymbolicLink() ? "symlink" : st.isFIFO() ? "fifo" : st.isFile() ? `file:${st.size}` : "other";
}

async function firstRun(root: string, output = "A"): Promise<string> {
  const r = await runWorkflow({ repoRoot: root, target: "run", toolName: "t" }, async (ctx) => ctx.step("a", { n: 1 }, () => output));
  return r.runDir;
}

describe("hostile files in a run folder", () => {
  for (const name of FILES) {
    for (const kind of KINDS) {
      it(`${name} as ${kind}: no hang, typed error or carried on, nothing touched`, async () => {
        const root = repo();
        const outside = path.join(root, "outside");
        mkdirSync(outside);
        const runDir = await firstRun(root);
        const file = path.join(runDir, name);
        rmSync(file, { force: true, recursive: true });
        const { foreign } = plant(kind, file, outside);
        const before = kindAt(file);
        const r = await settleWithin(
          runWorkflow({ repoRoot: root, target: "run", toolName: "t", reenter: true }, async (ctx) => {
            await ctx.step("a", { n: 1 }, () => "A");
            return ctx.step("b", { n: 2 }, () => "B");
          }),
          10_000,
        );
        if (!r.ok) {
          expect(String(r.error)).not.toContain("HUNG");
          expect(isWorkflowError(r.error)).toBe(true);
          const e = r.error as { code: string; message: string };
          expect(["UNSAFE_FILE", "FILE_TOO_LARGE"]).toContain(e.code);
          expect(e.message).toContain(path.join(runDir, name));
        }
        expect(kindAt(file)).toBe(before);
        if (foreign !== undefined) expect(foreignIntact(foreign)).toBe(true);
      });
    }
  }

  it("artifacts/ as a symlink out of the plan root: refused, nothing written or deleted there", async () => {
    const root = repo();
    const outside = path.join(root, "outside");
    mkdirSync(outside);
    const runDir = await firstRun(root, BIG);
    rmSync(path.join(runDir, "artifacts"), { recursive: true });
    const foreignArtifact = path.join(outside, `${"a".repeat(64)}.json`);
    writeFileSync(foreignArtifact, "FOREIGN CONTENT\n");
    writeFileSync(path.join(outside, ".x.json.1.0123456789ab.tmp"), "FOREIGN CONTENT\n");
    symlinkSync(outside, path.join(runDir, "artifacts"));
    const r = await settleWithin(runWorkflow({ repoRoot: root, target: "run", toolName: "t", reenter: true }, async (ctx) => ctx.step("b", {}, () => BIG)), 10_000);
    expect(r.ok).toBe(false);
    expect(isWorkflowError(!r.ok && r.error, "UNSAFE_FILE")).toBe(true);
    expect(readdirSync(outside).sort()).toEqual([".x.json.1.0123456789ab.tmp", `${"a".repeat(64)}.json`]);
    expect(foreignIntact(foreignArtifact)).toBe(true);
  });

  for (const kind of KINDS) {
    it(`an artifact replaced by a ${kind}: the step re-runs, the planted file is kept aside as evidence`, async () => {
      const root = repo();
      const outside = path.join(root, "outside");
      mkdirSync(outside);
      const runDir = await firstRun(root, BIG);
      const [artifact] = readdirSync(path.join(runDir, "artifacts"));
      const file = path.join(runDir, "artifacts", artifact as string);
      rmSync(file);
      const { foreign } = plant(kind, file, outside);
      let ran = 0;
      const r = await settleWithin(runWorkflow({ repoRoot: root, target: "run", toolName: "t", reenter: true }, async (ctx) => ctx.step("a", { n: 1 }, () => (ran++, BIG))), 10_000);
      if (!r.ok) throw r.error;
      expect(ran).toBe(1);
      const step = r.value.status === "completed" ? r.value.steps[0] : undefined;
      expect(step).toMatchObject({ outcome: "ran", reason: "artifact-corrupt" });
      const evidence = (step as { evidence?: string }).evidence as string;
      expect(path.basename(evidence)).toMatch(/\.tampered-/);
      expect(kindAt(evidence)).toBe(kind === "huge" ? `file:${600 * 1024 * 1024}` : kind);
      if (foreign !== undefined) expect(foreignIntact(foreign)).toBe(true);
    });
  }

  for (const kind of ["symlink", "fifo", "huge"] as const) {
    it(`the lock's holder file as a ${kind}: the next run settles (LOCKED or taken over), nothing followed`, async () => {
      const root = repo();
      const outside = path.join(root, "outside");
      mkdirSync(outside);
      const runDir = await firstRun(root);
      const holder = path.join(runDir, ".lock", `holder-${"f".repeat(32)}.json`);
      const { foreign } = plant(kind, holder, outside);
      const r = await settleWithin(runWorkflow({ repoRoot: root, target: "run", toolName: "t", reenter: true, lock: { staleMs: 2_000 } }, async () => "x"), 15_000);
      if (!r.ok) {
        expect(String(r.error)).not.toContain("HUNG");
        expect(isWorkflowError(r.error, "LOCKED"), String(r.error)).toBe(true);
      }
      if (foreign !== undefined) expect(foreignIntact(foreign)).toBe(true);
    });
  }

  it("a regular file in place of the run folder is UNSAFE_FILE naming it, not a raw EEXIST", async () => {
    const root = repo();
    mkdirSync(path.join(root, "ai_plan"));
    writeFileSync(path.join(root, "ai_plan", "run"), "not a folder");
    const r = await settleWithin(runWorkflow({ repoRoot: root, target: "run", toolName: "t" }, async () => "x"), 10_000);
    expect(r.ok).toBe(false);
    expect(isWorkflowError(!r.ok && r.error, "UNSAFE_FILE")).toBe(true);
  });
});
