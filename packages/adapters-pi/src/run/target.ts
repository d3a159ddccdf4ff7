/**
 * Step 1 of a run: turn what the user typed (a slug, a relative path or an absolute path) into one plan folder.
 * A bare slug is looked up under every configured plan root; found under two, it is ambiguous rather than guessed.
 */
import path from "node:path";
import { workflowError, type WorkflowError } from "@phasekit/core";
import { fsErrorCode, nodeFs, type FsPort } from "../io/fs-port.js";
import { resolvePlanRoot, validateSlug } from "../io/plan-paths.js";
import { createFsPlanStore, type PlanStore } from "../store/plan-store.js";

/** Where a run's plan folder may live. The first root is where new runs are created. */
export interface PlanRootsOptions {
  repoRoot: string;
  /** The plan root (default `<repoRoot>/ai_plan`; `~` expands to `homeDir`). */
  planRoot?: string | undefined;
  /** More roots searched for a bare slug (e.g. a global plan folder). */
  extraPlanRoots?: readonly string[] | undefined;
  homeDir?: string | undefined;
  fs?: FsPort | undefined;
}

/** A resolved target: the plan root, the slug (folder name) and the folder. */
export interface RunLocation {
  planRoot: string;
  slug: string;
  runDir: string;
}

/** The outcome of resolving a target. `exists` says whether the folder is already there. */
export type TargetResolution =
  | { kind: "found"; location: RunLocation }
  | { kind: "new"; location: RunLocation }
  | { kind: "ambiguous"; candidates: RunLocation[]; error: WorkflowError }
  | { kind: "invalid"; error: WorkflowError };

/** The plan roots in search order, absolute and without duplicates. */
export function planRootsOf(options: PlanRootsOptions): string[] {
  const roots = [resolvePlanRoot(options)];
  for (const extra of options.extraPlanRoots ?? []) {
    const root = resolvePlanRoot({ ...options, planRoot: extra });
    if (!roots.includes(root)) roots.push(root);
  }
  return roots;
}

/** Resolves `target` (slug, `./relative/path`, `/absolute/path`) to a plan folder without creating anything. */
export async function resolveRunTarget(options: PlanRootsOptions & { target: string }): Promise<TargetResolution> {
  const fs = options.fs ?? nodeFs;
  const { target } = options;
  if (typeof target !== "string" || target.trim() === "") {
    return { kind: "invalid", error: invalid(target, "it is empty") };
  }
  const roots = planRootsOf(options);
  if (isPathLike(target)) {
    const runDir = path.resolve(options.repoRoot, target);
    const slug = path.basename(runDir);
    // A path target must name a run folder directly inside a configured plan root: `..`, `.`, `x/..`, `../x`,
    // `%2e%2e/x` or an absolute path elsewhere would put workflow.json, the logs and the lock where `list` never looks.
    const planRoot = roots.find((r) => path.dirname(runDir) === r);
    if (planRoot === undefined) return { kind: "invalid", error: outsideRoots(target, runDir, roots) };
    const checked = validateSlug(slug);
    if (!checked.ok) return { kind: "invalid", error: checked.error };
    const location = { planRoot, slug, runDir };
    return (await isDir(fs, runDir)) ? { kind: "found", location } : { kind: "new", location };
  }
  const checked = validateSlug(target);
  if (!checked.ok) return { kind: "invalid", error: checked.error };
  const found: RunLocation[] = [];
  for (const planRoot of roots) {
    const runDir = path.join(planRoot, target);
    if (await isDir(fs, runDir)) found.push({ planRoot, slug: target, runDir });
  }
  const [first, second] = found;
  if (first !== undefined && second === undefined) return { kind: "found", location: first };
  if (first !== undefined) {
    const list = found.map((c) => c.runDir).join(", ");
    return {
      kind: "ambiguous",
      candidates: found,
      error: workflowError("resume", "AMBIGUOUS_TARGET", `slug "${target}" exists under more than one plan root: ${list}.`, {
        value: target,
        hint: "pass the folder's path instead of its bare slug",
      }),
    };
  }
  const planRoot = roots[0] as string;
  return { kind: "new", location: { planRoot, slug: target, runDir: path.join(planRoot, target) } };
}

function isPathLike(target: string): boolean {
  return target.includes("/") || target.includes(path.sep) || target.startsWith(".");
}

async function isDir(fs: FsPort, dir: string): Promise<boolean> {
  try {
    const st = await fs.lstat(dir);
    return st.isDirectory();
  } catch (error) {
    if (fsErrorCode(error) === "ENOENT" || fsErrorCode(error) === "ENOTDIR") return false;
    throw error;
  }
}

function outsideRoots(target: string, runDir: string, roots: readonly string[]): WorkflowError {
  return workflowError("resume", "PATH_OUTSIDE_ROOT", `target ${JSON.stringify(target)} resolves to ${runDir}, which is not a run folder directly inside a plan root (${roots.join(", ")}).`, {
    field: "target",
    value: target,
    hint: "pass a bare slug, or the path of a folder directly inside the plan root",
  });
}

function invalid(target: unknown, why: string): WorkflowError {
  return workflowError("resume", "INVALID_SLUG", `target ${JSON.stringify(target)} is refused: ${why}.`, {
    field: "target",
    value: target,
    hint: "pass a slug, a relative path or an absolute path of a plan folder",
  });
}

/** Runs `fn` on a store over the plan root `planRoot` (the caller's home folder and fs port), closed after. */
export async function withPlanRootStore<T>(options: PlanRootsOptions, planRoot: string, fn: (store: PlanStore) => Promise<T>): Promise<T> {
  const store = createFsPlanStore({ repoRoot: options.repoRoot, planRoot, homeDir: options.homeDir, fs: options.fs });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}
