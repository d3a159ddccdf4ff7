/**
 * SIGKILL inside a dispatch, at every file-system call it makes: the run's history (not workflow.json, not the
 * journal) decides what the resumed body sees, so after any kill the resumed run sees at every op what a run
 * without a crash saw, ends completed, and did every step's side effect once.
 */
import { existsSync, mkdtempSync, readFileSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { lockDirOf } from "../src/lock/holder.js";
import { releaseDefinitions } from "../../../examples/release-workflow.js";
import { spawnLockChild } from "./helpers/lock-children.js";
import { WALK } from "./contract/history-contract.js";

const STEPS = WALK.flatMap((op) => ("step" in op ? [op.step] : []));
const SLUG = "walk";
/**
 * Every dispatch makes the same file-system calls (the history's started and done entries, workflow.json, the
 * journal): the loop (dispatch 4) is swept at every call, the others at their first, middle and last call.
 */
const FULL = new Set([4]);

interface Outcome {
  signal: string | null;
  result?: { status: string; seen: string[]; state: string };
  calls: Map<number, number>;
}

async function runChild(repoRoot: string, kill?: { dispatch: number; at: number; mode: "before" | "after" }): Promise<Outcome> {
  const prev = { ...process.env };
  Object.assign(process.env, {
    WALK: JSON.stringify(WALK),
    KILL_DISPATCH: String(kill?.dispatch ?? 0),
    KILL_AT: String(kill?.at ?? 0),
    KILL_MODE: kill?.mode ?? "before",
  });
  const child = spawnLockChild("dispatch-crasher.mjs", [repoRoot, SLUG, path.join(repoRoot, "effects.log"), JSON.stringify(releaseDefinitions)]);
  process.env = prev;
  const exit = await child.exited;
  const calls = new Map<number, number>();
  for (const l of child.lines) {
    const m = /^fs-calls (\d+) (\d+)$/.exec(l);
    if (m) calls.set(Number(m[1]), Number(m[2]));
  }
  const line = child.lines.find((l) => l.startsWith("result "));
  if (exit.signal === null) expect(exit, exit.stderr).toMatchObject({ code: 0 });
  return { signal: exit.signal, calls, ...(line === undefined ? {} : { result: JSON.parse(line.slice(7)) as Outcome["result"] }) };
}

describe("runWorkflow: SIGKILL at every fs call of a dispatch, then resume", () => {
  it("the resumed body sees what an uninterrupted body saw, and every step ran once", async () => {
    const ref = await runChild(mkdtempSync(path.join(tmpdir(), "phasekit-dcrash-ref-")));
    expect(ref.result).toMatchObject({ status: "completed", state: "completed" });
    expect(ref.calls.size).toBe(7);
    let kills = 0;
    for (const [dispatch, total] of ref.calls) {
      expect(total, `dispatch ${dispatch} made no fs call`).toBeGreaterThan(0);
      const points = FULL.has(dispatch) ? Array.from({ length: total }, (_, i) => i + 1) : [...new Set([1, Math.ceil(total / 2), total])];
      for (const at of points) {
        for (const mode of ["before", "after"] as const) {
          const what = `dispatch ${dispatch}, fs call ${at}/${total}, kill ${mode}`;
          const repoRoot = mkdtempSync(path.join(tmpdir(), "phasekit-dcrash-"));
          const killed = await runChild(repoRoot, { dispatch, at, mode });
          expect(killed.signal, what).toBe("SIGKILL");
          kills++;
          // The killed runner is dead: age its lock past the stale time instead of waiting for it.
          const lockDir = lockDirOf(path.join(repoRoot, "ai_plan", SLUG));
          const old = new Date(Date.now() - 3_600_000);
          if (existsSync(lockDir)) utimesSync(lockDir, old, old);
          const resumed = await runChild(repoRoot);
          expect(resumed.result, what).toEqual(ref.result);
          const effects = readFileSync(path.join(repoRoot, "effects.log"), "utf8").trim().split("\n");
          expect(effects.sort(), what).toEqual([...STEPS].sort());
          const onDisk = JSON.parse(readFileSync(path.join(repoRoot, "ai_plan", SLUG, "workflow.json"), "utf8")) as { status: string; state: { status: string } };
          expect(onDisk, what).toMatchObject({ status: "completed", state: { status: "completed" } });
        }
      }
    }
    process.stderr.write(`[dispatch-crash] ${kills} kills, fs calls per dispatch ${JSON.stringify([...ref.calls])}\n`);
  }, 300_000);
});
