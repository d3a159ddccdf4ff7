/**
 * Time travel as a user meets it in the CLI, with real processes: `show` marks the steps a rerun superseded,
 * a fork's "pick a step key" hint names only the body's steps (never phasekit's own history keys), and `gc`
 * removes the hidden folder a killed fork left once its process is gone, never one whose process is alive.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { pidSpaceTag } from "../src/io/process-space.js";
import { forkRun, rerunFrom } from "../src/index.js";
import { gc } from "../src/store/retention.js";
import { openRunLog } from "../src/store/run-log/run-log.js";
import { json, phasekit } from "./cli/helpers/run-cli.js";
import { spawnChild, spawnLines } from "./helpers/spawn-child.js";
import { useTempRepos } from "./helpers/temp-repos.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const RUNNER = path.join(here, "helpers", "time-travel-runner.mjs");
const FORKER = path.join(here, "helpers", "fork-killer.mjs");
const tempRepo = useTempRepos("phasekit-time-travel-cli-");

/** Runs the 5-step workflow (a..e) of time-travel-runner.mjs to its end in a child. */
async function runChild(repo: string, slug: string): Promise<void> {
  const child = spawnChild(RUNNER, [repo, slug, path.join(repo, "effects.log"), ""]);
  const exited = await child.exited;
  if (!child.lines.includes("status completed")) throw new Error(`the run did not complete: ${exited.stderr}`);
}

/** The pid of a process that has ended (a real one: its number is not ours, and nothing answers it now). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(r.stdout);
}

describe("phasekit show after a rerun", () => {
  it("marks the superseded steps, in text and in phasekit.show/1", async () => {
    const repo = tempRepo();
    await runChild(repo, "s1");
    await rerunFrom({ repoRoot: repo, target: "s1", from: "c" });
    const shown = phasekit(["--repo", repo, "show", "s1", "--json"]);
    expect(shown.code, shown.stderr).toBe(0);
    const doc = json(shown.stdout, "phasekit.show/1") as { steps: Array<{ stepId: string; superseded: boolean }> };
    expect(doc.steps.map((s) => `${s.stepId}:${s.superseded}`)).toEqual(["a:false", "b:false", "c:true", "d:true", "e:true"]);
    const text = phasekit(["--repo", repo, "show", "s1"]).stdout;
    const row = (id: string) => text.split("\n").find((l) => l.trim().startsWith(`${id} `)) ?? "";
    expect(row("c")).toContain("superseded");
    expect(row("e")).toContain("superseded");
    expect(row("b")).not.toContain("superseded");
    // Once the steps ran again, nothing is superseded any more.
    await runChild(repo, "s1");
    const again = json(phasekit(["--repo", repo, "show", "s1", "--json"]).stdout, "phasekit.show/1") as { steps: Array<{ superseded: boolean }> };
    expect(again.steps.every((s) => !s.superseded)).toBe(true);
  });
});

describe("fork's hint for a step the run does not hold", () => {
  it("lists the body's steps, not phasekit's own history keys", async () => {
    const repo = tempRepo();
    await runChild(repo, "h1");
    // phasekit's own entries (a definitions run records these beside the body's steps), written first.
    const log = await openRunLog({ runDir: path.join(repo, "ai_plan", "h1") });
    for (const key of ["phasekit:pi-definitions", "phasekit:workflow", "phasekit:dispatch#1"]) await log.step(key, null, () => ({ ok: true }), { inputFingerprint: "sha256:00" });
    await log.close();
    const error = await forkRun({ repoRoot: repo, target: "h1", at: "zz" }).then(
      () => null,
      (e: unknown) => e as { code: string; details: { hint: string } },
    );
    expect(error?.code).toBe("NOT_FOUND");
    expect(error?.details.hint).toContain("a, b, c, d, e");
    expect(error?.details.hint).not.toContain("phasekit:");
    const cli = phasekit(["--repo", repo, "fork", "h1", "--at", "zz"]);
    expect(cli.code).toBe(3);
    expect(cli.stderr).toContain("a, b, c");
    expect(cli.stderr).not.toMatch(/phasekit:(pi-definitions|workflow|dispatch)/);
  });

  it("rerun's hint, and both commands' sentences, name the body's steps only", async () => {
    const repo = tempRepo();
    await runChild(repo, "h2");
    // phasekit's own entries between the body's steps e and f, as a definitions run records its dispatches.
    const log = await openRunLog({ runDir: path.join(repo, "ai_plan", "h2") });
    for (const key of ["phasekit:workflow", "phasekit:dispatch#1", "f"]) await log.step(key, null, () => ({ ok: true }), { inputFingerprint: "sha256:00" });
    await log.close();
    const missing = phasekit(["--repo", repo, "rerun", "h2", "--from", "zz"]);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain("a, b, c");
    expect(missing.stderr).not.toMatch(/phasekit:(workflow|dispatch)/);
    const forked = phasekit(["--repo", repo, "fork", "h2", "--at", "f", "--id", "h2-fork"]);
    expect(forked.code, forked.stderr).toBe(0);
    expect(forked.stdout).toContain("forked run h2 at f into h2-fork: 5 step(s) before it are reused");
    // The JSON keeps every key the fork copied (phasekit's own included): it is the record of what was done.
    const marked = phasekit(["--repo", repo, "rerun", "h2", "--from", "e"]);
    expect(marked.code, marked.stderr).toBe(0);
    expect(marked.stdout).toContain("run h2: 2 step(s) from e on (e, f) run again");
    const json2 = json(phasekit(["--repo", repo, "rerun", "h2", "--from", "e", "--json"]).stdout, "phasekit.time-travel/1") as { steps: string[] };
    // The mark names the body's steps and its dispatches (reuse-decision.ts keysFrom), never the workflow's start.
    expect(json2.steps).toEqual(["e", "phasekit:dispatch#1", "f"]);
  });
});

describe("fork and rerun: an option value the command cannot take is bad usage (exit 2), as every command's", () => {
  it("a reserved --from or --at and a taken --id: exit 2 from the bin, INVALID_OPTIONS in phasekit.error/1", async () => {
    const repo = tempRepo();
    await runChild(repo, "u1");
    await runChild(repo, "u2");
    // A key phasekit keeps for itself in u1's history, as a definitions run records its workflow's start.
    const log = await openRunLog({ runDir: path.join(repo, "ai_plan", "u1") });
    await log.step("phasekit:workflow", null, () => ({ ok: true }), { inputFingerprint: "sha256:00" });
    await log.close();
    const cases: Array<[string[], string]> = [
      [["rerun", "u1", "--from", "phasekit:workflow"], "from"],
      [["fork", "u1", "--at", "phasekit:workflow"], "at"],
      [["fork", "u1", "--at", "c", "--id", "u2"], "id"],
    ];
    for (const [args, field] of cases) {
      const text = phasekit(["--repo", repo, ...args]);
      expect(text.code, `${args.join(" ")}: ${text.stderr}`).toBe(2);
      const doc = phasekit(["--repo", repo, "--json", ...args]);
      expect(doc.code, args.join(" ")).toBe(2);
      expect(JSON.parse(doc.stderr)).toMatchObject({ schema: "phasekit.error/1", error: { code: "INVALID_OPTIONS", details: { field } }, exitCode: 2 });
    }
    // Nothing was marked or made.
    const shown = json(phasekit(["--repo", repo, "show", "u1", "--json"]).stdout, "phasekit.show/1") as { steps: Array<{ superseded: boolean }> };
    expect(shown.steps.some((s) => s.superseded)).toBe(false);
  });
});

describe("gc and the hidden folders of killed forks", () => {
  it("removes a dead fork's folder (the CLI and the API), keeps a live one's, and a dry run removes nothing", async () => {
    const repo = tempRepo();
    await runChild(repo, "g1");
    const planRoot = path.join(repo, "ai_plan");
    const hidden = () => readdirSync(planRoot).filter((n) => n.startsWith(".fork-")).sort();

    // A fork in progress: its process is alive (it waits on stdin after copying a).
    const live = spawnLines(process.execPath, [FORKER, repo, "g1", "c", "l1"]);
    await live.waitFor(/^copied a$/);
    const [liveName] = hidden();
    expect(liveName).toMatch(new RegExp(`^\\.fork-l1-${live.proc.pid}-${pidSpaceTag()}-[0-9a-f]{8}$`));

    // A fork killed mid-way leaves its hidden folder (started after the live one, whose folder it spares).
    const killed = spawnLines(process.execPath, [FORKER, repo, "g1", "c", "k1"]);
    await killed.waitFor(/^copied a$/);
    killed.proc.kill("SIGKILL");
    await killed.exited;
    const dead = hidden().filter((n) => n !== liveName);
    expect(dead).toEqual([expect.stringMatching(new RegExp(`^\\.fork-k1-${killed.proc.pid}-${pidSpaceTag()}-[0-9a-f]{8}$`))]);

    const dry = phasekit(["--repo", repo, "gc", "--keep", "5", "--dry-run", "--json"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(json(dry.stdout, "phasekit.gc/1")).toMatchObject({ removed: [{ slug: dead[0], reason: "dead-fork" }] });
    expect(hidden()).toEqual([...dead, liveName].sort());

    const removed = phasekit(["--repo", repo, "gc", "--keep", "5"]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toContain(`removed  ${dead[0]}`);
    expect(hidden()).toEqual([liveName]);

    // The live fork goes on and completes; its run is kept by gc as any run within the limits.
    live.send("go");
    live.send("go");
    await live.waitFor(/^forked /);
    await live.exited;
    expect(existsSync(path.join(planRoot, "l1"))).toBe(true);
    expect(hidden()).toEqual([]);

    // The API: a folder named for a pid that has ended goes; one named for a live pid (ours) stays.
    const gone = `.fork-x1-${deadPid()}-${pidSpaceTag()}-0123abcd`;
    const ours = `.fork-x2-${process.pid}-${pidSpaceTag()}-0123abcd`;
    for (const n of [gone, ours]) mkdirSync(path.join(planRoot, n));
    const report = await gc({ planRoot, keep: 5, now: () => new Date() });
    expect(report.removed.filter((r) => r.reason === "dead-fork").map((r) => r.slug)).toEqual([gone]);
    expect(hidden()).toEqual([ours]);
    // `rm` (gc for one run) never touches them.
    expect(phasekit(["--repo", repo, "rm", "g1", "--dry-run"]).stdout).not.toContain(".fork-");
  });
});
