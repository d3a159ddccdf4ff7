/**
 * Every command of the `phasekit` bin on a fixture repository holding a completed, an old, a paused (inside a
 * core workflow), a crashed and a live run: text and `--json` output, exit codes, and the error cases. Reads
 * come first; the tests that change runs come last, in order. Most calls run `main()` in this process (a node
 * start-up per call would cost minutes); help, usage errors, the shell pipe and --follow spawn the real bin,
 * and bin-tarball.int.test.ts runs it as installed.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BROKEN_DEFS, DEFS, fixtureRepo, type FixtureRepo } from "./helpers/fixture-runs.js";
import { holdLock } from "../helpers/temp-repos.js";
import { BIN, json, phasekit, phasekitAsync, phasekitInProcess } from "./helpers/run-cli.js";

let fx: FixtureRepo;
let at: (...args: string[]) => Promise<ReturnType<typeof phasekit>>;
beforeAll(async () => {
  fx = await fixtureRepo();
  at = (...args) => phasekitInProcess([...args, "--repo", fx.repo, "--defs", DEFS]);
}, 60_000);
afterAll(() => fx?.close());

type Run = { id: string; status: string; ownerTool: string | null; phase: string | null; lastStep: string | null; lockHolder: string | null };

describe("help, version and usage errors", () => {
  it("--help and --version exit 0; a command's --help shows its options", async () => {
    const help = phasekit(["--help"]);
    expect(help.code).toBe(0);
    for (const c of ["list", "show", "why", "journal", "validate", "diagram", "pause", "stop", "resume", "cancel", "gc", "rm", "state", "ui"]) expect(help.stdout).toContain(`  ${c}`);
    expect(help.stdout).toContain("Exit codes:");
    const version = phasekit(["--version"]);
    expect([version.code, version.stdout.trim()]).toEqual([0, JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version]);
    const gcHelp = phasekit(["gc", "--help"]);
    expect(gcHelp.code).toBe(0);
    expect(gcHelp.stdout).toContain("--dry-run");
  });

  it("an unknown command names it and suggests the closest; an unknown option names it; both exit 2", async () => {
    const typo = phasekit(["lsit"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("unknown command 'lsit'");
    expect(typo.stderr).toContain("Did you mean list?");
    const option = phasekit(["list", "--bogus"]);
    expect(option.code).toBe(2);
    expect(option.stderr).toContain("unknown option '--bogus'");
    expect(phasekit([]).code).toBe(2);
    expect(phasekit(["show"]).stderr).toContain("missing required argument 'run'");
  });

  it("a --repo that does not exist is exit 3 naming it, never an empty list", async () => {
    const r = phasekit(["list", "--repo", "/nonexistent/repo"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("/nonexistent/repo");
  });
});

describe("reading runs", () => {
  it("list: header and columns; crashed shown as such; --json is phasekit.list/1", async () => {
    const r = (await at("list"));
    expect(r.code).toBe(0);
    const [header, ...rows] = r.stdout.trim().split("\n");
    expect(header?.split(/\s+/)).toEqual(["ID", "STATUS", "TOOL", "PHASE", "STEP", "AGE", "LOCK"]);
    expect(rows).toHaveLength(5);
    const doc = json<{ runs: Run[] }>((await at("list", "--json")).stdout, "phasekit.list/1");
    const byId = Object.fromEntries(doc.runs.map((x) => [x.id, x]));
    expect(byId["crashed"]).toMatchObject({ status: "crashed", ownerTool: "live-bot" });
    expect(byId["crashed"]?.lockHolder).toMatch(/^gone: tool live-bot/);
    expect(byId["live"]).toMatchObject({ status: "running", lastStep: "s0" });
    expect(byId["live"]?.lockHolder).toMatch(/^tool live-bot \(pid \d+/);
    expect(byId["shipping"]).toMatchObject({ status: "paused", phase: "test", lastStep: "plan" });
    expect(byId["done"]).toMatchObject({ status: "completed", lastStep: "build" });
    expect(doc.runs[doc.runs.length - 1]?.id).toBe("old"); // newest first
    expect(rows.find((l) => l.startsWith("old"))).toMatch(/\s40d\s/);
  });

  it("list --status and --limit filter; a bad --status is bad usage (exit 2) naming it", async () => {
    expect(json<{ runs: Run[] }>((await at("list", "--status", "completed", "--json")).stdout, "phasekit.list/1").runs.map((x) => x.id).sort()).toEqual(["done", "old"]);
    expect(json<{ runs: Run[] }>((await at("list", "--limit", "2", "--json")).stdout, "phasekit.list/1").runs).toHaveLength(2);
    const bad = (await at("list", "--status", "zombie"));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("zombie");
  });

  it("show: metadata, the resolved workflow position, steps with attempts and durations, the lock", async () => {
    const paused = (await at("show", "shipping"));
    expect(paused.code).toBe(0);
    expect(paused.stdout).toContain("status   paused");
    expect(paused.stdout).toContain("Ship a change > Check [2/3] > 🧪 Test [1/2]");
    expect(paused.stdout).toMatch(/plan\s+completed\s+1\s+\d+ms/);
    const live = (await at("show", "live"));
    expect(live.stdout).toMatch(/lock\s+held by tool live-bot/);
    expect(live.stdout).toMatch(/s1\s+in-flight\s+1\s+-/);
    const crashed = json<{ steps: Array<{ stepId: string; status: string }>; summary: Run }>((await at("show", "crashed", "--json")).stdout, "phasekit.show/1");
    expect(crashed.summary.status).toBe("crashed");
    expect(crashed.steps.find((s) => s.stepId === "s1")?.status).toBe("interrupted");
    const byPath = (await at("show", path.join(fx.repo, "ai_plan", "done")));
    expect(byPath.code).toBe(0);
    expect(byPath.stdout).toContain("run done");
  });

  it("show of an unknown id is exit 3 naming it; a corrupt-looking id is refused", async () => {
    const r = (await at("show", "nope"));
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('no run "nope"');
    const e = JSON.parse((await at("show", "nope", "--json")).stderr) as { schema: string; error: { code: string }; exitCode: number };
    expect(e).toMatchObject({ schema: "phasekit.error/1", error: { code: "NOT_FOUND" }, exitCode: 3 });
    expect((await at("show", "a b")).code).toBe(1);
  });

  it("why: reuse when the input is the same, run again when it changed, and why for crashed or unknown steps", async () => {
    expect((await at("why", "done", "build")).stdout).toContain("reuse-if-same-input");
    const same = json<{ decision: string; reason: string }>((await at("why", "done", "build", "--input", '{"from":"fetch"}', "--json")).stdout, "phasekit.why/1");
    expect(same).toMatchObject({ decision: "reuse", reason: "same-input" });
    const changed = (await at("why", "done", "build", "--input", '{"from":"elsewhere"}'));
    expect(changed.stdout).toContain("run (input-changed)");
    expect((await at("why", "crashed", "s1")).stdout).toContain("run (started)");
    expect((await at("why", "done", "never")).stdout).toContain("run (no-record)");
    expect((await at("why", "done", "build", "--input", "{nope")).code).toBe(2);
  });

  it("show --step: the step's record, its input's fingerprint (the input is not kept) and its output as pretty JSON", async () => {
    const text = await at("show", "done", "--step", "fetch");
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^step fetch of run done: completed \(attempt 1, \d+ms\)\n {2}input {3}not recorded, only its fingerprint v1:sha256:[0-9a-f]{64}\n {2}output {2}11 bytes of JSON:\n\{\n {2}"bytes": 3\n\}\n$/);
    type Payload = { id: string; stepId: string; input: { recorded: boolean; fingerprint: string }; output: { ok: boolean; value?: unknown; reason?: string } };
    const doc = json<Payload>((await at("show", path.join(fx.repo, "ai_plan", "done"), "--step", "build", "--json")).stdout, "phasekit.step-payload/1");
    expect(doc).toMatchObject({ id: "done", stepId: "build", input: { recorded: false }, output: { ok: true, value: "built" } });
    const inFlight = json<Payload>((await at("show", "live", "--step", "s1", "--json")).stdout, "phasekit.step-payload/1");
    expect(inFlight.output).toMatchObject({ ok: false, reason: "started" });
    const none = await at("show", "done", "--step", "nope");
    expect([none.code, none.stderr]).toEqual([3, 'phasekit: run done has no step "nope". Fix: `phasekit show done` lists its steps\n']);
  });

  it("journal: one readable line per event; --json is NDJSON of phasekit.journal-entry/1", async () => {
    const r = (await at("journal", "shipping"));
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^#1 {2}\S+ {2}gen 1 {2}created by ship-bot: running, phase plan$/);
    expect(lines).toContain(lines.find((l) => / {2}gen 2 {2}advanced 📋 Plan → 🧪 Test, entering check$/.test(l)));
    expect(lines.some((l) => / {2}running → paused$/.test(l))).toBe(true);
    expect(lines.some((l) => / {2}paused: coffee$/.test(l))).toBe(true);
    const entries = (await at("journal", "shipping", "--json")).stdout.trim().split("\n").map((l) => JSON.parse(l) as { schema: string; seq: number });
    expect(entries.map((e) => e.seq)).toEqual(lines.map((_, i) => i + 1));
    expect(new Set(entries.map((e) => e.schema))).toEqual(new Set(["phasekit.journal-entry/1"]));
  });

  it("validate: clean folders exit 0; broken ones exit 1 with every problem's file and line", async () => {
    const ok = (await phasekitInProcess(["validate", DEFS]));
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("2 workflow folder(s), 2 compiled, 0 problems");
    const bad = (await phasekitInProcess(["validate", BROKEN_DEFS]));
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain(`${path.join(BROKEN_DEFS, "bad", "workflow.yaml")}:4: bad.phases[1].subworkflow: workflow "nowhere" does not exist`);
    expect(bad.stdout).toContain(`${path.join(BROKEN_DEFS, "bad", "two.md")}:3: bad.phases[2].id: phase id "step" is already used`);
    expect(bad.stdout).toContain(`${path.join(BROKEN_DEFS, "yamlbad", "workflow.yaml")}:4:`);
    const doc = json<{ ok: boolean; problems: Array<{ file: string; line: number; code: string }> }>((await phasekitInProcess(["validate", BROKEN_DEFS, "--json"])).stdout, "phasekit.validate/1");
    expect(doc.ok).toBe(false);
    expect(doc.problems.map((p) => [path.basename(p.file), p.line, p.code]).sort()).toEqual([
      ["two.md", 3, "DUPLICATE_PHASE_ID"],
      ["workflow.yaml", 4, "DANGLING_REFERENCE"],
      ["workflow.yaml", 4, "INVALID_DEFINITION"],
    ]);
    expect((await phasekitInProcess(["validate", "/nonexistent/defs"])).code).toBe(1);
  });

  it("diagram: a workflow as Mermaid (sub-workflow as subgraph, loop drawn); a run's position highlighted", async () => {
    const wf = (await at("diagram", "ship"));
    expect(wf.code).toBe(0);
    expect(wf.stdout).toContain('subgraph p1["Check"]');
    expect(wf.stdout).toContain("p1_1 -. loop .-> p1_0");
    expect(wf.stdout).not.toContain("class ");
    // Global options go before or after the command; --defs repeats (a later folder overrides an earlier one).
    const before = await phasekitInProcess(["--defs", BROKEN_DEFS, "--defs", DEFS, "diagram", "ship", "--repo", fx.repo]);
    expect([before.code, before.stdout]).toEqual([0, wf.stdout]);
    const run = json<{ current: string; run: string; mermaid: string }>((await at("diagram", "shipping", "--json")).stdout, "phasekit.diagram/1");
    expect(run).toMatchObject({ current: "p1_0", run: "shipping" });
    expect(run.mermaid).toContain("class p1_0 current");
    expect((await at("diagram", "nothing-here")).code).toBe(3);
  });
});

describe("changing runs", () => {
  it("state show | state set round-trips through a pipe; a stale generation is refused; a live run is busy (exit 4, holder named)", async () => {
    const shown = (await at("state", "show", "done"));
    expect(shown.code).toBe(0);
    expect(shown.stdout).toBe(readFileSync(path.join(fx.repo, "ai_plan", "done", "workflow.json"), "utf8"));
    // A real shell pipe: show | set stores the same document again (one generation later).
    const piped = execFileSync("bash", ["-c", 'node "$0" state show done --repo "$1" | node "$0" state set done --repo "$1"', BIN, fx.repo], { encoding: "utf8" });
    expect(piped).toMatch(/^run done: state stored \(generation \d+\)\n$/);
    const pipedBack = (await at("state", "show", "done")).stdout;
    expect(JSON.parse(pipedBack).generation).toBe(JSON.parse(shown.stdout).generation + 1);
    const edited = pipedBack.replace('"ownerTool": "builder"', '"ownerTool": "builder", "branch": "release"');
    const set = (await phasekitInProcess(["state", "set", "done", "--repo", fx.repo], { input: edited }));
    expect(set.code).toBe(0);
    expect(JSON.parse((await at("state", "show", "done")).stdout)).toMatchObject({ branch: "release", generation: JSON.parse(shown.stdout).generation + 2 });
    const again = (await phasekitInProcess(["state", "set", "done", "--repo", fx.repo], { input: edited }));
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("expected generation");
    const live = (await phasekitInProcess(["state", "set", "live", "--repo", fx.repo], { input: (await at("state", "show", "live")).stdout }));
    expect(live.code).toBe(4);
    expect(live.stderr).toMatch(/locked by tool live-bot \(pid \d+/);
    const wrong = (await phasekitInProcess(["state", "set", "old", "--repo", fx.repo], { input: edited }));
    // INVALID_OPTIONS: a document the command cannot take is bad usage, as a malformed --input is (cli/io.ts exitCodeOf).
    expect([wrong.code, wrong.stderr.includes("run done's, not old's")]).toEqual([2, true]);
    const junk = (await phasekitInProcess(["state", "set", "done", "--repo", fx.repo], { input: "{" }));
    expect(junk.code).toBe(1);
    expect(junk.stderr).toContain("<stdin>");
  });

  it("state check and state set refuse damaged input with a typed error naming the problem", async () => {
    for (const bad of ["", "{", '{"__proto__": {}}', '{"schemaVersion": 99}', "\uFEFF{}"]) {
      for (const args of [["state", "check"], ["state", "set", "done"]]) {
        const r = await phasekitInProcess([...args, "--repo", fx.repo, "--json"], { input: bad });
        expect(r.code).toBe(1);
        const e = JSON.parse(r.stderr) as { error: { code: string; message: string } };
        expect(["CORRUPT_FILE", "UNSUPPORTED_VERSION"]).toContain(e.error.code);
        expect(e.error.message).toContain("<stdin>");
      }
    }
  });

  it("inspect says whether a tool may resume a run (exit 0 only when it may)", async () => {
    const ok = (await at("inspect", "shipping", "--tool", "ship-bot"));
    expect([ok.code, JSON.parse(ok.stdout).kind]).toEqual([0, "resumable"]);
    const other = (await at("inspect", "shipping", "--tool", "intruder"));
    expect([other.code, JSON.parse(other.stdout).kind]).toEqual([1, "owned-by-other"]);
    expect((await at("inspect", "nope", "--tool", "x")).code).toBe(3);
    expect((await at("inspect", "shipping")).code).toBe(2);
  });

  it("gc --dry-run touches nothing and never offers a live or locked run; gc removes only the finished run past the limit", async () => {
    // A minute from now: `state set` above dated its edit of "done" now, and gc's ages are against io.now().
    const later = (...args: string[]) => phasekitInProcess([...args, "--repo", fx.repo, "--defs", DEFS], { now: () => new Date(Date.now() + 60_000) });
    const snapshot = () => readdirSync(path.join(fx.repo, "ai_plan")).map((d) => `${d}:${statSync(path.join(fx.repo, "ai_plan", d)).mtimeMs}`).sort();
    const before = snapshot();
    type Gc = { removed: Array<{ slug: string }>; kept: Array<{ slug: string; reason: string }> };
    const dry = json<Gc>((await later("gc", "--older-than", "1s", "--dry-run", "--json")).stdout, "phasekit.gc/1");
    expect(dry.removed.map((r) => r.slug).sort()).toEqual(["done", "old"]);
    expect(dry.kept.filter((k) => ["live", "crashed", "shipping"].includes(k.slug)).map((k) => k.reason)).toEqual(["active", "active", "active"]);
    expect(snapshot()).toEqual(before);
    // A finished run whose lock someone holds is never offered either.
    const lock = await holdLock(fx.repo, "done");
    const locked = json<Gc>((await later("gc", "--older-than", "1s", "--dry-run", "--json")).stdout, "phasekit.gc/1");
    await lock.release();
    expect(locked.removed.map((r) => r.slug)).toEqual(["old"]);
    expect(locked.kept.find((k) => k.slug === "done")?.reason).toBe("locked");
    const real = (await at("gc", "--older-than", "30d"));
    expect(real.code).toBe(0);
    expect(real.stdout).toContain("removed  old  (older-than");
    expect(readdirSync(path.join(fx.repo, "ai_plan")).sort()).toEqual(["crashed", "done", "live", "shipping"]);
    expect((await at("gc")).code).toBe(2);
    expect((await at("gc", "--older-than", "soon")).stderr).toContain("soon");
  });

  it("pause, then resume withdraws it; stop records a stop request; cancel ends a paused run at once (core state too)", async () => {
    const p = json<{ action: string; request: { signal: string; reason: string } }>((await at("pause", "live", "lunch", "break", "--json")).stdout, "phasekit.control/1");
    expect(p).toMatchObject({ action: "pause", request: { signal: "pause", reason: "lunch break" } });
    expect((await at("show", "live")).stdout).toContain("pending  pause requested");
    expect((await at("resume", "live")).stdout).toContain("pause request withdrawn");
    expect((await at("show", "live")).stdout).not.toContain("pending");
    expect((await at("resume", "done")).code).toBe(1);
    expect((await at("resume", "shipping")).stdout).toContain("continues when ship-bot runs target shipping again");
    const c = (await at("cancel", "shipping", "not", "needed"));
    expect(c.code).toBe(0);
    const m = JSON.parse((await at("state", "show", "shipping")).stdout) as { status: string; failureReason: string; state: { status: string } };
    expect([m.status, m.failureReason, m.state.status]).toEqual(["cancelled", "not needed", "cancelled"]);
    expect((await at("cancel", "shipping")).code).toBe(1);
    const stop = json<{ request: { signal: string } }>((await at("stop", "crashed", "--json")).stdout, "phasekit.control/1");
    expect(stop.request.signal).toBe("stop");
    expect((await at("show", "crashed")).stdout).toContain("pending  stop requested");
    expect((await at("stop", "nope")).code).toBe(3);
  });

  it("journal --follow prints a live run's events as they come and ends when the run ends", async () => {
    const follow = phasekitAsync(["journal", "live", "--follow", "--interval", "50", "--repo", fx.repo]);
    await new Promise((r) => setTimeout(r, 400));
    fx.live.send("go");
    const r = await follow;
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/running → completed/);
  });

  it("a corrupt workflow.json is named with its byte offset: list marks the run unreadable, show and state show say where and exit 1", async () => {
    const file = path.join(fx.repo, "ai_plan", "done", "workflow.json");
    writeFileSync(file, '{"schemaVersion": 1, "slug": "done",, }');
    const list = json<{ runs: Run[] }>((await at("list", "--json")).stdout, "phasekit.list/1");
    expect(list.runs.find((r) => r.id === "done")).toMatchObject({ status: "unreadable", error: { code: "CORRUPT_FILE" } });
    const show = await at("show", "done");
    expect(show.code).toBe(1);
    expect(show.stdout).toContain(`${file} is corrupt at byte 36`);
    expect(show.stderr).toContain("run done cannot be read");
    const state = await at("state", "show", "done");
    expect(state.code).toBe(1);
    expect(state.stderr).toContain(`${file} is corrupt at byte 36`);
    expect(readFileSync(file, "utf8")).toBe('{"schemaVersion": 1, "slug": "done",, }'); // left as it was
  });
});
