/** Temporary repositories for in-process runWorkflow tests, removed after each test. */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach } from "vitest";
import { acquirePlanLock, type PlanLock } from "../../src/plan-folder.js";

/** Registers the cleanup and returns a factory of fresh repository folders named `<prefix>XXXXXX`. */
export function useTempRepos(prefix: string): () => string {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return () => {
    const d = mkdtempSync(path.join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
}

/** The parsed workflow.json of run `slug` under `<root>/ai_plan`. */
export function metadataOn<T = Record<string, unknown>>(root: string, slug: string): T {
  return JSON.parse(readFileSync(path.join(root, "ai_plan", slug, "workflow.json"), "utf8")) as T;
}

/** Takes the plan lock of run `slug` as another tool would (the folder is created first). */
export async function holdLock(root: string, slug: string, tool = "other-tool"): Promise<PlanLock> {
  const runDir = path.join(root, "ai_plan", slug);
  mkdirSync(runDir, { recursive: true });
  const held = await acquirePlanLock({ runDir, owner: { tool } });
  if (!held.ok) throw held.error;
  return held.lock;
}
