import { describe, it, expect, afterAll } from "vitest";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { resolveVerificationConfig } from "../src/verification/config.js";
import { createPersistentVerificationCache, createRunVerificationCache, createVerificationCache } from "../src/verification/cache.js";
import type { VerificationCache } from "../src/verification/cache.js";
import type { WorkspaceState } from "../src/verification/fingerprint.js";
import { outputTail, runVerificationPolicy } from "../src/verification/policy.js";
import type { CommandRunResult, CommandRunRequest } from "../src/verification/runner.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** A runner that answers from a script per command and counts calls. */
function scripted(script: Record<string, Array<Partial<CommandRunResult> & { ok: boolean }>>) {
  const calls: string[] = [];
  const runCommand = async (req: CommandRunRequest): Promise<CommandRunResult> => {
    calls.push(req.command);
    const queue = script[req.command] ?? [{ ok: true }];
    const next = queue.length > 1 ? queue.shift() : queue[0];
    if (next?.ok === false) return { output: "", durationMs: 1, reason: "exit", exitCode: 1, signal: null, ...next } as CommandRunResult;
    return { ok: true, output: "ok", durationMs: 1 };
  };
  return { runCommand, calls };
}

function reporterLog() {
  const lines: string[] = [];
  const at = (level: string) => (t: string) => void lines.push(`${level}: ${t}`);
  return { reporter: { info: at("info"), warning: at("warning"), error: at("error") }, lines };
}

function fakeState() {
  let digest = "s0";
  let captures = 0;
  const capture = async (): Promise<WorkspaceState> => {
    captures++;
    return { ok: true, source: "git", digest, bytes: 1 };
  };
  return { capture, set: (d: string) => void (digest = d), captures: () => captures };
}

const policyOf = (override: Record<string, unknown>) => resolveVerificationConfig("implement", {}, { stages: ["custom"], ...override });

describe("runVerificationPolicy", () => {
  it("retries a failing command up to maxAttempts and reports each retry", async () => {
    const { runCommand, calls } = scripted({ flaky: [{ ok: false }, { ok: false }, { ok: true }] });
    const { reporter, lines } = reporterLog();
    const out = await runVerificationPolicy({ policy: policyOf({ commands: ["flaky"], maxAttempts: 3 }), cwd: "/x", tool: "implement", cache: createVerificationCache("off"), runCommand, reporter });
    expect(out).toEqual({ ok: true, results: [{ stage: "custom", command: "flaky", status: "passed", attempts: 3, key: null }] });
    expect(calls).toEqual(["flaky", "flaky", "flaky"]);
    expect(lines.filter((l) => l.startsWith("warning:"))).toEqual(["warning: flaky failed (exit 1), retrying 2/3", "warning: flaky failed (exit 1), retrying 3/3"]);
  });

  it("stops at the first failing command with the last 4,000 characters of its output", async () => {
    const output = `${"a".repeat(5_000)}${"b".repeat(3_999)}Z`;
    const { runCommand, calls } = scripted({ first: [{ ok: true }], broken: [{ ok: false, output, exitCode: 2 }], never: [{ ok: true }] });
    const out = await runVerificationPolicy({ policy: policyOf({ commands: ["first", "broken", "never"], maxAttempts: 2 }), cwd: "/x", tool: "t", cache: createVerificationCache("off"), runCommand });
    expect(out.ok).toBe(false);
    if (out.ok) return;
    expect(out.failed).toEqual({ stage: "custom", command: "broken", attempts: 2, reason: "exit", exitCode: 2, outputTail: `${"b".repeat(3_999)}Z` });
    expect(out.failed.outputTail).toHaveLength(4_000);
    expect(out.results.map((r) => r.status)).toEqual(["passed", "failed"]);
    expect(calls).toEqual(["first", "broken", "broken"]);
  });

  it("skips a command whose key passed before and reports the cache hit", async () => {
    const state = fakeState();
    const cache = createRunVerificationCache();
    const { runCommand, calls } = scripted({});
    const policy = policyOf({ commands: ["tsc", "vitest"] });
    const first = await runVerificationPolicy({ policy, cwd: "/x", tool: "t", phase: "p", cache, runCommand, fingerprint: { capture: state.capture } });
    expect(first.ok && first.results.map((r) => r.status)).toEqual(["passed", "passed"]);
    expect(state.captures()).toBe(2); // a command ran between the two, so the state was taken again
    const { reporter, lines } = reporterLog();
    const second = await runVerificationPolicy({ policy, cwd: "/x", tool: "t", phase: "p", cache, runCommand, reporter, fingerprint: { capture: state.capture } });
    expect(second.ok && second.results.map((r) => [r.status, r.attempts])).toEqual([["cached", 0], ["cached", 0]]);
    expect(state.captures()).toBe(3); // nothing ran: one capture served both commands
    expect(lines).toEqual(["info: cached pass, skipped: tsc", "info: cached pass, skipped: vitest"]);
    expect(calls).toEqual(["tsc", "vitest"]);
    // a different phase or a changed tree misses
    const other = await runVerificationPolicy({ policy, cwd: "/x", tool: "t", phase: "q", cache, runCommand, fingerprint: { capture: state.capture } });
    expect(other.ok && other.results.map((r) => r.status)).toEqual(["passed", "passed"]);
    state.set("s1");
    const changed = await runVerificationPolicy({ policy, cwd: "/x", tool: "t", phase: "p", cache, runCommand, fingerprint: { capture: state.capture } });
    expect(changed.ok && changed.results.map((r) => r.status)).toEqual(["passed", "passed"]);
  });

  it("a failed command is not recorded, and a missing key runs and records nothing", async () => {
    const cache = createRunVerificationCache();
    const { runCommand } = scripted({ bad: [{ ok: false }] });
    const state = fakeState();
    await runVerificationPolicy({ policy: policyOf({ commands: ["bad"] }), cwd: "/x", tool: "t", cache, runCommand, fingerprint: { capture: state.capture } });
    expect(await cache.entries()).toEqual([]);
    const { reporter, lines } = reporterLog();
    const tooLarge = async (): Promise<WorkspaceState> => ({ ok: false, key: null, reason: "too-large", message: "big" });
    const out = await runVerificationPolicy({ policy: policyOf({ commands: ["good"] }), cwd: "/x", tool: "t", cache, runCommand, reporter, fingerprint: { capture: tooLarge } });
    expect(out).toEqual({ ok: true, results: [{ stage: "custom", command: "good", status: "passed", attempts: 1, key: null }] });
    expect(lines[0]).toBe("info: no cache key (too-large): good runs");
    expect(await cache.entries()).toEqual([]);
  });

  it("never retries an abort, and an aborted signal stops before the next command", async () => {
    const { runCommand, calls } = scripted({ long: [{ ok: false, reason: "aborted", exitCode: null }] });
    const out = await runVerificationPolicy({ policy: policyOf({ commands: ["long", "next"], maxAttempts: 5 }), cwd: "/x", tool: "t", cache: createVerificationCache("off"), runCommand });
    expect(!out.ok && out.failed).toMatchObject({ command: "long", attempts: 1, reason: "aborted" });
    expect(calls).toEqual(["long"]);
    const ac = new AbortController();
    ac.abort();
    const pre = await runVerificationPolicy({ policy: policyOf({ commands: ["x"] }), cwd: "/x", tool: "t", cache: createVerificationCache("off"), runCommand, signal: ac.signal });
    expect(!pre.ok && pre.failed).toMatchObject({ command: "x", attempts: 0, reason: "aborted" });
    expect(calls).toEqual(["long"]);
  });

  it("runs nothing when timing is off or the mode is agent-only", async () => {
    const { runCommand, calls } = scripted({});
    const cache = createVerificationCache("off");
    expect(await runVerificationPolicy({ policy: policyOf({ commands: ["x"], timing: "off" }), cwd: "/x", tool: "t", cache, runCommand })).toEqual({ ok: true, results: [], skipped: "timing-off" });
    expect(await runVerificationPolicy({ policy: policyOf({ commands: ["x"], mode: "agent" }), cwd: "/x", tool: "t", cache, runCommand })).toEqual({ ok: true, results: [], skipped: "agent-only" });
    expect(calls).toEqual([]);
  });

  it("a cache that cannot be written is a warning, not a failed verification", async () => {
    const broken: VerificationCache = { mode: "persistent", has: async () => false, record: async () => Promise.reject(new Error("disk full")), entries: async () => [] };
    const { reporter, lines } = reporterLog();
    const out = await runVerificationPolicy({ policy: policyOf({ commands: ["x"] }), cwd: "/x", tool: "t", cache: broken, runCommand: scripted({}).runCommand, reporter, fingerprint: { capture: fakeState().capture } });
    expect(out.ok).toBe(true);
    expect(lines).toContain("warning: verification cache not updated: disk full");
  });

  it("a cache that cannot be read is a miss with a warning", async () => {
    const broken: VerificationCache = { mode: "run", has: async () => Promise.reject(new Error("EIO")), record: async () => undefined, entries: async () => [] };
    const { reporter, lines } = reporterLog();
    const { runCommand, calls } = scripted({});
    const out = await runVerificationPolicy({ policy: policyOf({ commands: ["x"] }), cwd: "/x", tool: "t", cache: broken, runCommand, reporter, fingerprint: { capture: fakeState().capture } });
    expect(out.ok && out.results[0]?.status).toBe("passed");
    expect(calls).toEqual(["x"]);
    expect(lines).toContain("warning: verification cache unreadable, running anyway: EIO");
  });

  it("a persistent cache hit survives a new cache instance (real workspace hash outside git)", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "phasekit-vpol-"));
    dirs.push(dir);
    await writeFile(path.join(dir, "src.txt"), "v1");
    const file = path.join(dir, ".cache", "verification-cache.json");
    const policy = resolveVerificationConfig("t", {}, { stages: ["custom"], commands: ["check"], cache: "persistent" });
    const { runCommand, calls } = scripted({});
    const run = () => runVerificationPolicy({ policy, cwd: dir, tool: "t", phase: "p", cache: createPersistentVerificationCache({ file }), runCommand });
    expect((await run()).ok).toBe(true);
    const again = await run();
    expect(again.ok && again.results[0]?.status).toBe("cached");
    expect(calls).toEqual(["check"]);
    await writeFile(path.join(dir, "src.txt"), "v2");
    const edited = await run();
    expect(edited.ok && edited.results[0]?.status).toBe("passed");
    expect(calls).toEqual(["check", "check"]);
  });
});

describe("outputTail", () => {
  it("keeps the end and never starts with half a surrogate pair", () => {
    expect(outputTail("short")).toBe("short");
    const t = outputTail(`x${"😀".repeat(2_500)}`, 4_000);
    expect(t).toBe("😀".repeat(2_000));
    const odd = outputTail(`${"😀".repeat(2_500)}`, 3_999);
    expect(odd).toBe("😀".repeat(1_999));
  });
});
