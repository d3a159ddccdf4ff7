/**
 * A plan root shared between machines: the leftovers of a writer on another host (a fork's hidden folder, a temp
 * file) are judged by the lock's liveness rule, so a pid that means nothing here never gets them removed. Real
 * processes; the other host is a child in its own UTS namespace (`unshare -r -u`, skipped where unavailable).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { cleanTempFiles } from "../src/io/atomic-write.js";
import { gc } from "../src/store/retention.js";
import { useTempRepos } from "./helpers/temp-repos.js";

const MAKER = path.join(path.dirname(fileURLToPath(import.meta.url)), "helpers", "leftover-maker.mjs");
const tempRepo = useTempRepos("phasekit-leftovers-host-");
const canUnshare = spawnSync("unshare", ["-r", "-u", "true"]).status === 0;

/** Makes the leftovers in a child that has ended by the time this returns; `host` runs it as another machine. */
function leftovers(planRoot: string, target: string, host?: string): { fork: string; temp: string } {
  const node = [process.execPath, MAKER, planRoot, target];
  const r = host === undefined
    ? spawnSync(node[0]!, node.slice(1), { encoding: "utf8" })
    : spawnSync("unshare", ["-r", "-u", "sh", "-c", `hostname ${host} && exec "$@"`, "sh", ...node], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`leftover-maker failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as { fork: string; temp: string };
}

describe("leftovers of a writer on another host sharing the plan root", () => {
  it.skipIf(!canUnshare)("gc and temp-file cleanup keep them (their pid means nothing here); this host's dead writer's go", async () => {
    const repo = tempRepo();
    const planRoot = path.join(repo, "ai_plan");
    const runDir = path.join(planRoot, "r1");
    mkdirSync(runDir, { recursive: true });
    const target = path.join(runDir, "workflow.json");
    const theirs = leftovers(planRoot, target, "machine-b");
    const ours = leftovers(planRoot, target);

    const report = await gc({ planRoot, keep: 5, now: () => new Date() });
    expect(report.removed.filter((r) => r.reason === "dead-fork").map((r) => r.slug)).toEqual([ours.fork]);
    expect(readdirSync(planRoot).filter((n) => n.startsWith(".fork-"))).toEqual([theirs.fork]);

    expect(await cleanTempFiles(runDir)).toEqual([ours.temp]);
    expect(readdirSync(runDir)).toEqual([theirs.temp]);
  });
});
