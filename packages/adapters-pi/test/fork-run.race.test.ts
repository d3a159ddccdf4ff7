/**
 * forkRun's last move: a folder of the fork's id that appears after the id was checked (another process taking
 * the same id just before the fork's rename) is never replaced, empty or not, and the fork fails with the typed
 * "id taken". The other process is simulated at the exact moment: right before the rename of the built fork.
 */
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";
import { forkRun } from "../src/index.js";
import { spawnChild } from "./helpers/spawn-child.js";
import { useTempRepos } from "./helpers/temp-repos.js";

const hook = vi.hoisted(() => ({ beforeRename: undefined as undefined | ((to: string) => void) }));
vi.mock("node:fs/promises", async (original) => {
  const fsp = await original<typeof import("node:fs/promises")>();
  const rename = async (from: string, to: string): Promise<void> => {
    const run = hook.beforeRename;
    if (run !== undefined && path.basename(from).startsWith(".fork-")) {
      hook.beforeRename = undefined;
      run(to);
    }
    return fsp.rename(from, to);
  };
  return { ...fsp, rename, default: { ...fsp, rename } };
});

const RUNNER = path.join(path.dirname(fileURLToPath(import.meta.url)), "helpers", "time-travel-runner.mjs");
const tempRepo = useTempRepos("phasekit-fork-race-");

async function sourceRun(repo: string): Promise<void> {
  const child = spawnChild(RUNNER, [repo, "src", path.join(repo, "effects.log"), ""]);
  const exited = await child.exited;
  if (!child.lines.includes("status completed")) throw new Error(`the run did not complete: ${exited.stderr}`);
}

describe("forkRun when its id is taken right before its rename", () => {
  it("never replaces an empty folder another process made: the typed error, their folder kept", async () => {
    const repo = tempRepo();
    await sourceRun(repo);
    let theirs = false;
    hook.beforeRename = (to) => {
      try {
        mkdirSync(to);
        theirs = true;
      } catch {
        // EEXIST: the fork claimed the name first, so the other process's mkdir lost (as it should).
      }
    };
    const outcome = await forkRun({ repoRoot: repo, target: "src", at: "c", id: "f1" }).then(() => "forked", (e: { code?: string }) => e.code);
    const folder = readdirSync(path.join(repo, "ai_plan", "f1"));
    // Their mkdir won: the fork is refused and their folder stays empty (before the fix the rename replaced it).
    if (theirs) expect({ outcome, folder }).toEqual({ outcome: "INVALID_OPTIONS", folder: [] });
    // The fork's own claim was there first: their mkdir failed, and the fork is in place.
    else expect({ outcome, workflow: folder.includes("workflow.json") }).toEqual({ outcome: "forked", workflow: true });
    expect(readdirSync(path.join(repo, "ai_plan")).filter((n) => n.startsWith(".fork-"))).toEqual([]);
  });

  it("fails INVALID_OPTIONS (not a raw ENOTEMPTY) when the folder is filled, and keeps what is in it", async () => {
    const repo = tempRepo();
    await sourceRun(repo);
    hook.beforeRename = (to) => {
      mkdirSync(to, { recursive: true });
      writeFileSync(path.join(to, "theirs.txt"), "mine");
    };
    await expect(forkRun({ repoRoot: repo, target: "src", at: "c", id: "f1" })).rejects.toMatchObject({ code: "INVALID_OPTIONS", details: { field: "id", value: "f1" } });
    expect(readdirSync(path.join(repo, "ai_plan", "f1"))).toEqual(["theirs.txt"]);
    expect(readdirSync(path.join(repo, "ai_plan")).filter((n) => n.startsWith(".fork-"))).toEqual([]);
  });
});
