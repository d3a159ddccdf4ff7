import { describe, it, expect } from "vitest";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { lockDirOf } from "../src/lock/holder.js";
import { METADATA_FILE } from "../src/store/plan-store.js";
import { readWorkflowMetadata } from "../src/store/metadata.js";
import { readRunLog } from "../src/store/run-log/reader.js";
import { spawnLockChild, type LockChild } from "./helpers/lock-children.js";

const CI = process.env.CI === "true";
const KILLS = CI ? 200 : 24;
const CHAINS = 2;
/** Kills one plan folder may take before its next runner is left to finish. */
const MAX_KILLS_PER_RUN = 8;
const STEPS = 8;
const SLUG = "crash";

const hash = (text: string): string => createHash("sha256").update(text).digest("hex").slice(0, 16);

/** The outputs and step input hashes of a run without crashes, derived the way the runner derives them. */
function expected(): { outputs: string[]; inputHashes: string[] } {
  const outputs: string[] = [];
  const inputHashes: string[] = [];
  let prev = "seed";
  for (let i = 0; i < STEPS; i++) {
    inputHashes.push(hash(JSON.stringify({ i, prev })));
    prev = hash(`${prev}|${i}`);
    outputs.push(prev);
  }
  return { outputs, inputHashes };
}

interface Effect {
  stepId: string;
  attempt: number;
  inputHash: string;
  pid: number;
}

interface Stats {
  kills: number;
  killsInBody: number;
  killsAfterAnEffect: number;
  rerunsAfterEffect: number;
  runs: number;
}

function startRunner(repoRoot: string, effects: string): LockChild {
  return spawnLockChild("run-crash-runner.mjs", [repoRoot, SLUG, effects]);
}

function whenLines(child: LockChild, n: number): Promise<void> {
  return new Promise((resolve) => {
    const check = (): void => {
      if (child.lines.length < n) return;
      child.proc.stdout?.off("data", check);
      resolve();
    };
    child.proc.stdout?.on("data", check);
    void child.exited.then(() => resolve());
    check();
  });
}

/** Kills the runner at a random moment: after a random delay, or right after (or just after) its n-th line. */
async function killAtRandom(child: LockChild): Promise<void> {
  if (Math.random() < 0.2) {
    await Promise.race([sleep(Math.random() * 500), child.exited]);
  } else {
    await whenLines(child, 1 + Math.floor(Math.random() * (STEPS * 3 + 2)));
    if (Math.random() < 0.5) await sleep(Math.random() * 4);
  }
  if (child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill("SIGKILL");
}

/** One plan folder: runners are killed until the budget or the per-run cap runs out; the last one finishes. */
async function crashRun(stats: Stats): Promise<void> {
  const repoRoot = mkdtempSync(path.join(tmpdir(), "phasekit-run-crash-"));
  const runDir = path.join(repoRoot, "ai_plan", SLUG);
  const effectsFile = path.join(repoRoot, "effects.log");
  const killedPids = new Set<number>();
  const history = new Map<string, StepLog>();
  for (;;) {
    const child = startRunner(repoRoot, effectsFile);
    const killing = stats.kills < KILLS && killedPids.size < MAX_KILLS_PER_RUN;
    if (killing) {
      stats.kills++;
      await killAtRandom(child);
    }
    const exit = await child.exited;
    // Read now: a later runner that closes cleanly folds the segments into a snapshot (latest records only).
    collectRecords(runDir, history);
    if (exit.signal === "SIGKILL") {
      killedPids.add(child.proc.pid as number);
      if (child.lines.some((l) => l.startsWith("start "))) stats.killsInBody++;
      if (child.lines.some((l) => l.startsWith("effect "))) stats.killsAfterAnEffect++;
      // The runner is dead for sure: age its lock past the stale time instead of waiting 2 s for it.
      const lockDir = lockDirOf(runDir);
      const old = new Date(Date.now() - 3_600_000);
      if (existsSync(lockDir)) utimesSync(lockDir, old, old);
      continue;
    }
    if (killing) stats.kills--; // it finished before the kill landed
    // Every resume completes, and its outputs equal a run without crashes.
    expect(exit, exit.stderr).toMatchObject({ code: 0, signal: null });
    expect(child.lines.at(-1)).toBe("status completed");
    const result = JSON.parse(child.lines.find((l) => l.startsWith("result "))?.slice(7) ?? "null") as unknown;
    expect(result).toEqual(expected().outputs);
    await verifyFolder(runDir, effectsFile, killedPids, stats, history);
    stats.runs++;
    return;
  }
}

interface StepLog {
  started: Set<number>;
  completed: Set<number>;
}

function note(byStep: Map<string, StepLog>, key: string, t: string, attempt: number): void {
  const log = byStep.get(key) ?? { started: new Set(), completed: new Set() };
  // A completed attempt was started, whether or not its started record survived a fold.
  log.started.add(attempt);
  if (t === "done") log.completed.add(attempt);
  byStep.set(key, log);
}

// Every step record in the segments of the run log as they are now (a killed runner's torn last line is
// skipped), added to `byStep`. Called after every runner, before a later one's fold can delete them.
function collectRecords(runDir: string, byStep: Map<string, StepLog>): void {
  const dir = path.join(runDir, "runlog");
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir).filter((n) => n.endsWith(".seg")).sort()) {
    const lines = readFileSync(path.join(dir, name), "utf8").split("\n");
    lines.pop(); // the text after the last newline: empty, or a torn line
    for (const line of lines) {
      const r = JSON.parse(line.split("\t")[0] as string) as { t: string; k: string; a: number };
      if (r.t === "start" || r.t === "done") note(byStep, r.k, r.t, r.a);
    }
  }
}

// The records collected along the way, and the latest record of every step as the history holds it now.
async function readCheckpointLog(runDir: string, byStep: Map<string, StepLog>): Promise<Map<string, StepLog>> {
  collectRecords(runDir, byStep);
  const view = await readRunLog(runDir);
  for (const e of view?.entries() ?? []) if (e.status !== "failed") note(byStep, e.key, e.status === "completed" ? "done" : "start", e.attempt);
  view?.close();
  return byStep;
}

/**
 * Side effects per step: one per attempt that reached the effect (each attempt has its own started record),
 * every earlier attempt died with a killed runner, and the attempt that completed is the last one ever: a
 * completed checkpoint's step never ran again.
 */
async function verifyFolder(runDir: string, effectsFile: string, killed: Set<number>, stats: Stats, history: Map<string, StepLog>): Promise<void> {
  const meta = await readWorkflowMetadata(path.join(runDir, METADATA_FILE));
  // (lastCompletedStepId is not checked: a kill between s7's checkpoint and its metadata write leaves it at s6,
  // and the resume reuses s7 without rewriting it.)
  expect(meta.ok && meta.metadata, JSON.stringify(meta)).toMatchObject({ status: "completed" });
  const effects: Effect[] = readFileSync(effectsFile, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => {
      const [stepId = "", attempt = "", inputHash = "", pid = ""] = l.split(" ");
      return { stepId, attempt: Number(attempt), inputHash, pid: Number(pid) };
    });
  const log = await readCheckpointLog(runDir, history);
  const { inputHashes } = expected();
  for (let i = 0; i < STEPS; i++) {
    const id = `s${i}`;
    const mine = effects.filter((e) => e.stepId === id);
    const steps = log.get(id);
    expect(steps, `no checkpoint records for ${id}`).toBeDefined();
    if (steps === undefined) return;
    expect([...steps.completed], `${id} completed more than once`).toHaveLength(1);
    const done = [...steps.completed][0] as number;
    const attempts = mine.map((e) => e.attempt);
    expect(attempts, `${id}: attempts in log order`).toEqual([...attempts].sort((a, b) => a - b));
    expect(new Set(attempts).size, `${id}: an attempt did its side effect twice`).toBe(attempts.length);
    for (const a of attempts) expect([...steps.started], `${id}: effect without a started record`).toContain(a);
    expect(attempts.at(-1), `${id}: the completed attempt is the last effect`).toBe(done);
    for (const e of mine) {
      expect(e.inputHash, `${id}: ran with a wrong input`).toBe(inputHashes[i]);
    }
    // A runner that was not killed never leaves an attempt behind: earlier attempts all belong to killed runners.
    for (const e of mine.slice(0, -1)) expect(killed.has(e.pid), `${id}: attempt ${e.attempt} by pid ${e.pid} was not killed`).toBe(true);
    stats.rerunsAfterEffect += mine.length - 1;
  }
}

describe("runWorkflow: SIGKILL at random moments, then resume", () => {
  it(`survives ${KILLS} kills: every resume completes, outputs match a crash-free run, side effects once per attempt`, async () => {
    // A run without crashes gives the reference outputs.
    const refRoot = mkdtempSync(path.join(tmpdir(), "phasekit-run-crash-ref-"));
    const ref = startRunner(refRoot, path.join(refRoot, "effects.log"));
    const refExit = await ref.exited;
    expect(refExit, refExit.stderr).toMatchObject({ code: 0, signal: null });
    expect(JSON.parse(ref.lines.find((l) => l.startsWith("result "))?.slice(7) ?? "null")).toEqual(expected().outputs);
    expect(readFileSync(path.join(refRoot, "effects.log"), "utf8").trim().split("\n")).toHaveLength(STEPS);

    const stats: Stats = { kills: 0, killsInBody: 0, killsAfterAnEffect: 0, rerunsAfterEffect: 0, runs: 0 };
    const chain = async (): Promise<void> => {
      while (stats.kills < KILLS) await crashRun(stats);
    };
    await Promise.all(Array.from({ length: CHAINS }, chain));
    expect(stats.kills).toBeGreaterThanOrEqual(KILLS);
    // The kills really landed inside bodies, not only during start-up.
    expect(stats.killsInBody).toBeGreaterThan(KILLS / 3);
    expect(stats.killsAfterAnEffect).toBeGreaterThan(0);
    process.stderr.write(`[crash] ${JSON.stringify(stats)}\n`);
  }, CI ? 180_000 : 120_000);
});
