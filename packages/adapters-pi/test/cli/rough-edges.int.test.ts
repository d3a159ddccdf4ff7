/**
 * The CLI's rough edges (issue 22), each as a user met it: a pipe closed by `head`, `journal --follow` on runs
 * with nothing more coming, usage errors under --json, option values that are bad usage (exit 2), typo keys in
 * definitions, `state set` dating and naming its edit, a live step's verdict, loops in the journal, and the id
 * `pause`/`stop` report. Spawned bins run dist (built by `tsc -b`); the rest runs `main()` in this process.
 */
import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReporter, runWorkflow } from "@phasekit/adapters-pi";
import { loadDefinitionFolders } from "../../src/definitions/folders.js";
import { spawnLines, type LineChild } from "../helpers/spawn-child.js";
import { holdLock } from "../helpers/temp-repos.js";
import { DEFS } from "./helpers/fixture-runs.js";
import { BIN, json, phasekitInProcess } from "./helpers/run-cli.js";

const LIVE_CHILD = fileURLToPath(new URL("./helpers/live-run.mjs", import.meta.url));
const quiet = () => createReporter({ onChange: () => undefined });
let repo: string;
let live: LineChild;
const at = (args: string[], options: { input?: string } = {}) => phasekitInProcess([...args, "--repo", repo, "--defs", DEFS], options);

/** Runs the bin; a command still running after `ms` is killed and reported as such (code null, `killed`). */
function bin(args: string[], ms = 8000): Promise<{ code: number | null; killed: boolean; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let killed = false;
    const timer = setTimeout(() => ((killed = true), child.kill("SIGKILL")), ms);
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("close", (code) => (clearTimeout(timer), resolve({ code, killed, stdout, stderr })));
  });
}

beforeAll(async () => {
  repo = mkdtempSync(path.join(tmpdir(), "pk-rough-"));
  await runWorkflow({ repoRoot: repo, target: "done", toolName: "builder", createReporter: quiet }, async (ctx) => ctx.step("s", { n: 1 }, () => "x"));
  await runWorkflow({ repoRoot: repo, target: "fin", toolName: "builder", createReporter: quiet }, async (ctx) => ctx.step("last", {}, () => 1));
  const registry = loadDefinitionFolders([DEFS]).registry;
  await runWorkflow({ repoRoot: repo, target: "looped", toolName: "t", createReporter: quiet, workflow: { registry, workflowKey: "check", taskDescription: "t" } }, async (ctx) => {
    await ctx.workflow?.dispatch({ type: "advance" });
    await ctx.workflow?.dispatch({ type: "loop" });
    return ctx.step("after", {}, () => 1);
  });
  // A crashed run (runner SIGKILLed mid-step): its lock is left behind by a dead pid.
  const crashed = spawnLines(process.execPath, [LIVE_CHILD, repo, "crashed"]);
  await crashed.waitFor(/"in"/);
  crashed.proc.kill("SIGKILL");
  await crashed.exited;
  live = spawnLines(process.execPath, [LIVE_CHILD, repo, "live"]);
  await live.waitFor(/"in"/);
}, 60_000);

afterAll(async () => {
  live?.proc.kill("SIGKILL");
  await live?.exited;
  rmSync(repo, { recursive: true, force: true });
});

describe("pipes and --follow", () => {
  it("a reader that closes the pipe early (`| head -c 20`) ends the command quietly: no EPIPE stack trace", async () => {
    // Enough runs for `list --json` to outgrow the pipe's buffer (folders with no state yet: cheap to make).
    const many = mkdtempSync(path.join(tmpdir(), "pk-many-"));
    for (let i = 0; i < 600; i++) mkdirSync(path.join(many, "ai_plan", `run-${i}`), { recursive: true });
    const r = spawnSync("bash", ["-c", 'node "$0" list --json --repo "$1" | head -c 20 >/dev/null; echo "${PIPESTATUS[0]}"', BIN, many], { encoding: "utf8" });
    rmSync(many, { recursive: true, force: true });
    expect(r.stderr).toBe("");
    expect(r.stdout.trim()).toBe("0");
  });

  it("journal --follow ends for a finished run whose dead runner left its lock, a folder with no state yet, and an unreadable run", async () => {
    // A completed run that carries the lock a dead runner left behind (copied from the crashed run).
    cpSync(path.join(repo, "ai_plan", "crashed", ".lock"), path.join(repo, "ai_plan", "looped", ".lock"), { recursive: true });
    const stale = await bin(["journal", "looped", "--follow", "--interval", "20", "--repo", repo]);
    expect([stale.killed, stale.code]).toEqual([false, 0]);
    rmSync(path.join(repo, "ai_plan", "looped", ".lock"), { recursive: true, force: true });
    mkdirSync(path.join(repo, "ai_plan", "empty"));
    const empty = await bin(["journal", "empty", "--follow", "--interval", "20", "--repo", repo]);
    expect([empty.killed, empty.code]).toEqual([false, 0]);
    mkdirSync(path.join(repo, "ai_plan", "broken"));
    writeFileSync(path.join(repo, "ai_plan", "broken", "workflow.json"), "{ not json");
    const broken = await bin(["journal", "broken", "--follow", "--interval", "20", "--repo", repo]);
    expect([broken.killed, broken.code]).toEqual([false, 1]);
    expect(broken.stderr).toContain("cannot be followed");
    rmSync(path.join(repo, "ai_plan", "empty"), { recursive: true });
    rmSync(path.join(repo, "ai_plan", "broken"), { recursive: true });
  }, 30_000);
});

describe("usage", () => {
  it("usage errors under --json are phasekit.error/1 documents on stderr, exit 2, and nothing else", async () => {
    for (const args of [["lsit", "--json"], ["show", "--json"], ["list", "--bogus", "--json"], ["--json"]]) {
      const r = await phasekitInProcess(args);
      expect(r.code, args.join(" ")).toBe(2);
      const doc = JSON.parse(r.stderr) as { schema: string; error: { code: string; message: string }; exitCode: number };
      expect(doc).toMatchObject({ schema: "phasekit.error/1", error: { code: "USAGE" }, exitCode: 2 });
      expect(doc.error.message).not.toMatch(/^error:/);
    }
    expect(JSON.parse((await phasekitInProcess(["lsit", "--json"])).stderr).error.message).toContain("'lsit'");
  });

  it("an option value the command cannot take is bad usage: exit 2 naming the option and value (docs/cli.md)", async () => {
    const cases: Array<[string[], string]> = [
      [["list", "--limit", "x"], "--limit"],
      [["list", "--limit", "0"], "--limit"],
      [["list", "--status", "zombie"], "zombie"],
      [["journal", "done", "--interval", "1.5"], "--interval"],
      [["gc", "--older-than", "soon"], "soon"],
      [["gc"], "--keep"],
      [["why", "done", "s", "--input", "{nope"], "--input"],
      [["ui", "--port", "70000"], "70000"],
    ];
    for (const [args, named] of cases) {
      const r = await at(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr, args.join(" ")).toContain(named);
      const doc = JSON.parse((await at([...args, "--json"])).stderr) as { error: { code: string }; exitCode: number };
      expect(doc).toMatchObject({ error: { code: "INVALID_OPTIONS" }, exitCode: 2 });
    }
  });

  it("validate names keys that are no field (typos such as loopabel, emojii) with the closest field; --strict fails on them", async () => {
    const defs = mkdtempSync(path.join(tmpdir(), "pk-typo-"));
    try {
      cpSync(path.join(DEFS, "check"), path.join(defs, "check"), { recursive: true });
      const yaml = path.join(defs, "check", "workflow.yaml");
      writeFileSync(yaml, readFileSync(yaml, "utf8").replace("loopable: true", "loopabel: true"));
      const md = path.join(defs, "check", "test.md");
      writeFileSync(md, readFileSync(md, "utf8").replace("emoji:", "emojii:"));
      const r = await phasekitInProcess(["validate", defs]);
      expect(r.stdout).toContain(`warning: ${yaml}:3: loopabel is not a workflow.yaml field, so it is ignored (did you mean loopable?)`);
      expect(r.stdout).toMatch(new RegExp(`warning: ${md.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:\\d+: emojii is not a phase front matter field, so it is ignored \\(did you mean emoji\\?\\)`));
      expect(r.code).toBe(0);
      const strict = await phasekitInProcess(["validate", defs, "--strict", "--json"]);
      expect(strict.code).toBe(1);
      expect(json<{ ok: boolean }>(strict.stdout, "phasekit.validate/1").ok).toBe(false);
      expect((await phasekitInProcess(["validate", DEFS, "--strict"])).code).toBe(0);
    } finally {
      rmSync(defs, { recursive: true, force: true });
    }
  });
});

describe("what commands say", () => {
  it("state set dates the edit now and names the CLI as the tool; on a terminal it says it reads stdin", async () => {
    const before = JSON.parse((await at(["state", "show", "done"])).stdout) as { updatedAt: string; currentTool: string };
    const started = Date.now();
    const r = await phasekitInProcess(["state", "set", "done", "--repo", repo], { input: (await at(["state", "show", "done"])).stdout, tty: true });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("reading run done's state from stdin (end with Ctrl-D)");
    const after = JSON.parse((await at(["state", "show", "done"])).stdout) as { updatedAt: string; currentTool: string };
    expect(after.currentTool).toBe("phasekit-cli");
    expect(Date.parse(after.updatedAt)).toBeGreaterThanOrEqual(started - 1000);
    expect(after.updatedAt).not.toBe(before.updatedAt);
    const piped = await phasekitInProcess(["state", "set", "done", "--repo", repo], { input: (await at(["state", "show", "done"])).stdout });
    expect(piped.stderr).toBe("");
  });

  it("a healthy in-flight step is in flight, not 'stopped mid-step'; a crashed one is", async () => {
    const liveWhy = json<{ decision: string; explanation: string }>((await at(["why", "live", "s1", "--json"])).stdout, "phasekit.why/1");
    expect(liveWhy.decision).toBe("in-flight");
    expect(liveWhy.explanation).not.toContain("stopped");
    expect((await at(["why", "crashed", "s1"])).stdout).toContain("stopped mid-step");
  });

  it("loops reach the journal, told as sentences with the raw entry in --json", async () => {
    const lines = (await at(["journal", "looped"])).stdout;
    expect(lines).toContain("looped back to 🧪 Test (loop 1) in check");
    const raw = (await at(["journal", "looped", "--json"])).stdout.trim().split("\n").map((l) => JSON.parse(l) as { event: string; text: string; data: { loops: number } });
    expect(raw.find((e) => e.event === "workflow:looped")).toMatchObject({ text: "looped back to 🧪 Test (loop 1) in check", data: { loops: 1 } });
  });

  it("pause and stop report the run's id, not the path they were given", async () => {
    const byPath = path.join(repo, "ai_plan", "live");
    const p = json<{ id: string }>((await at(["pause", byPath, "--json"])).stdout, "phasekit.control/1");
    expect(p.id).toBe("live");
    expect((await at(["resume", byPath])).code).toBe(0);
    const s = json<{ id: string }>((await at(["stop", byPath, "--json"])).stdout, "phasekit.control/1");
    expect(s.id).toBe("live");
  });
});

describe("rm and --fields", () => {
  it("rm removes one finished run by gc's rules; a live, crashed or locked run is refused with the reason", async () => {
    const dir = path.join(repo, "ai_plan", "done");
    const dry = await at(["rm", "done", "--dry-run"]);
    expect([dry.code, dry.stdout]).toEqual([0, expect.stringMatching(/^would remove run done \(completed, updated \S+\)\n$/)]);
    expect(readFileSync(path.join(dir, "workflow.json"), "utf8")).toContain('"slug": "done"');
    const crashed = await at(["rm", "crashed"]);
    expect([crashed.code, crashed.stderr]).toEqual([1, "phasekit: run crashed is running: only a finished run is removed. Fix: `phasekit cancel crashed` ends it first\n"]);
    expect((await at(["rm", "live", "--json"])).code).toBe(1);
    const lock = await holdLock(repo, "fin");
    const locked = await at(["rm", "fin"]);
    await lock.release();
    expect([locked.code, locked.stderr]).toEqual([4, "phasekit: run fin is locked by a live holder; it is not removed.\n"]);
    const gone = json<{ id: string; removed: boolean }>((await at(["rm", dir, "--json"])).stdout, "phasekit.rm/1");
    expect(gone).toMatchObject({ id: "done", removed: true });
    expect((await at(["rm", "done"])).code).toBe(3);
  });

  it("--fields picks list columns and JSON keys, and the parts of show's document; an unknown field is bad usage", async () => {
    const rows = json<{ runs: Array<Record<string, unknown>> }>((await at(["list", "--fields", "id,status", "--json"])).stdout, "phasekit.list/1").runs;
    expect(rows.find((r) => r["id"] === "fin")).toEqual({ id: "fin", status: "completed" });
    expect(new Set(rows.flatMap((r) => Object.keys(r)))).toEqual(new Set(["id", "status"]));
    const text = (await at(["list", "--fields", "id,lastStep"])).stdout.split("\n");
    expect(text[0]?.split(/\s+/)).toEqual(["ID", "LAST_STEP"]);
    expect(text).toContain("fin      last");
    const bad = await at(["list", "--fields", "id,colour"]);
    expect([bad.code, bad.stderr.includes("colour") && bad.stderr.includes("lockHolder")]).toEqual([2, true]);
    const show = JSON.parse((await at(["show", "fin", "--fields", "summary,steps"])).stdout) as Record<string, unknown>;
    expect(Object.keys(show)).toEqual(["schema", "summary", "steps"]);
    expect((await at(["show", "fin", "--fields", "nope"])).code).toBe(2);
  });
});
