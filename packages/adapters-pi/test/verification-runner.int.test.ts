import { describe, it, expect } from "vitest";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createShellCommandRunner } from "../src/verification/runner.js";

const cwd = tmpdir();
// A killed orphan may linger as a zombie until its new parent reaps it; a zombie runs nothing, so it counts as dead.
const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return process.platform !== "linux";
  }
};

describe.skipIf(process.platform === "win32")("shell command runner", () => {
  const run = createShellCommandRunner({ killGraceMs: 500 });

  it("passes on exit 0 and captures stdout and stderr together", async () => {
    const r = await run({ command: "echo out; echo err 1>&2; echo done", cwd, timeoutMs: 20_000 });
    expect(r.ok).toBe(true);
    expect(r.output.split("\n").sort()).toEqual(["", "done", "err", "out"]);
  });

  it("reports a non-zero exit with its code and output", async () => {
    const r = await run({ command: "echo broken; exit 3", cwd, timeoutMs: 20_000 });
    expect(r).toMatchObject({ ok: false, reason: "exit", exitCode: 3, output: "broken\n" });
  });

  it("keeps only the tail of a large output", async () => {
    const small = createShellCommandRunner({ maxOutputBytes: 1_000 });
    const r = await small({ command: "i=0; while [ $i -lt 2000 ]; do echo line$i; i=$((i+1)); done; exit 1", cwd, timeoutMs: 20_000 });
    expect(r.ok).toBe(false);
    expect(r.output.length).toBeLessThanOrEqual(1_000);
    expect(r.output.endsWith("line1999\n")).toBe(true);
  });

  it("kills the whole process group on timeout", async () => {
    const started = Date.now();
    const r = await run({ command: "sleep 30 & echo $!; wait", cwd, timeoutMs: 300 });
    expect(r).toMatchObject({ ok: false, reason: "timeout" });
    expect(Date.now() - started).toBeLessThan(10_000);
    const grandchild = Number(r.output.trim());
    expect(grandchild).toBeGreaterThan(0);
    await new Promise((res) => setTimeout(res, 200));
    expect(isAlive(grandchild)).toBe(false);
  });

  it("stops on abort, before or during the run", async () => {
    const ac = new AbortController();
    const pending = run({ command: "sleep 30", cwd, timeoutMs: 60_000, signal: ac.signal });
    setTimeout(() => ac.abort(), 100);
    expect(await pending).toMatchObject({ ok: false, reason: "aborted" });
    const pre = new AbortController();
    pre.abort();
    expect(await run({ command: "sleep 30", cwd, timeoutMs: 60_000, signal: pre.signal })).toMatchObject({ ok: false, reason: "aborted" });
  });

  it("ends background leftovers of a command that exited", async () => {
    const r = await run({ command: "sleep 30 & echo $!", cwd, timeoutMs: 20_000 });
    expect(r.ok).toBe(true);
    await new Promise((res) => setTimeout(res, 200));
    expect(isAlive(Number(r.output.trim()))).toBe(false);
  });

  it("reports a missing shell as a spawn error", async () => {
    const r = await createShellCommandRunner({ shell: ["/nonexistent/sh", "-c"] })({ command: "true", cwd, timeoutMs: 5_000 });
    expect(r).toMatchObject({ ok: false, reason: "spawn-error" });
  });
});
