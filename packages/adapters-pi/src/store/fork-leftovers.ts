/**
 * The hidden folders in which `forkRun` builds a fork (run/fork-run.ts) before renaming it into place. A fork
 * killed mid-way leaves one; it was never a run. Its name carries the forking process's pid and pid-space tag
 * (host, boot, pid namespace), so a folder whose process provably is gone can be removed (by the next fork and by
 * `gc`), while one whose process is alive, or ran on another machine sharing the plan root, is never touched.
 * The liveness rule is the lock's (`judgeTaggedPid`), as for temp files: one rule for every leftover of a writer.
 */
import path from "node:path";
import { randomBytes } from "node:crypto";
import { readdir, rm } from "node:fs/promises";
import { judgeTaggedPid, pidSpaceTag } from "../io/process-space.js";

/** Hidden folders of the plan root that hold a fork being built (never a run: slugs cannot start with a dot). */
export const FORK_TEMP_PREFIX = ".fork-";

// `.fork-<slug>-<pid>-<tag>-<random>`; a name without the tag (from before it) is never judged dead.
const NAME = /^\.fork-.+-(\d+)-([0-9a-f]{8})-[0-9a-f]{8}$/u;

/** A fresh folder path in `planRoot` to build the fork `slug` in, named for this process. */
export function forkTempDir(planRoot: string, slug: string): string {
  return path.join(planRoot, `${FORK_TEMP_PREFIX}${slug}-${process.pid}-${pidSpaceTag()}-${randomBytes(4).toString("hex")}`);
}

/** The names of the fork folders in `planRoot` whose process is gone (sorted). */
export async function deadForkFolders(planRoot: string): Promise<string[]> {
  const names = await readdir(planRoot).catch(() => [] as string[]);
  return names.filter((name) => {
    const m = NAME.exec(name);
    return m !== null && judgeTaggedPid(Number(m[1]), m[2] ?? "") === "dead";
  }).sort();
}

/** Removes the fork folders in `planRoot` whose process is gone; returns the names removed. */
export async function removeDeadForks(planRoot: string): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await deadForkFolders(planRoot)) {
    const ok = await rm(path.join(planRoot, name), { recursive: true, force: true }).then(
      () => true,
      () => false,
    );
    if (ok) removed.push(name);
  }
  return removed;
}
