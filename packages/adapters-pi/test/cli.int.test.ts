import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runWorkflow } from "@phasekit/adapters-pi";

const CLI = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));
let repo: string;
let id: string;

function cli(args: string[], input?: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args, "--repo", repo], { input, encoding: "utf8" });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(async () => {
  repo = mkdtempSync(path.join(tmpdir(), "pk-cli-"));
  const r = await runWorkflow({ repoRoot: repo, toolName: "builder" }, async (ctx) => ctx.step("s", {}, () => "v"));
  id = r.slug;
});
afterAll(() => rmSync(repo, { recursive: true, force: true }));

describe("phasekit CLI", () => {
  it("state show prints workflow.json byte for byte, and state check accepts it from a pipe", () => {
    expect(id).toMatch(/^[0-9a-z]{8}$/);
    const shown = cli(["state", "show", id]);
    expect(shown.status).toBe(0);
    expect(shown.stdout).toBe(readFileSync(path.join(repo, "ai_plan", id, "workflow.json"), "utf8"));
    // The shell pipe `phasekit state show <id> | phasekit state check` round-trips.
    const piped = execFileSync("bash", ["-c", `node ${CLI} state show ${id} --repo ${repo} | node ${CLI} state check --repo ${repo}`], { encoding: "utf8" });
    expect(piped).toBe(shown.stdout);
  });

  it("state check refuses damaged input with a typed error naming the problem", () => {
    for (const bad of ["", "{", '{"__proto__": {}}', '{"schemaVersion": 99}', "\uFEFF{}"]) {
      const r = cli(["state", "check"], bad);
      expect(r.status).toBe(1);
      const error = JSON.parse(r.stderr) as { name: string; code: string; message: string };
      expect(error.name).toBe("WorkflowError");
      expect(["CORRUPT_FILE", "UNSUPPORTED_VERSION"]).toContain(error.code);
    }
  });

  it("list, inspect, pause and stop work on a run by its id", () => {
    expect(cli(["list"]).stdout).toContain(`${id}\tcompleted\tbuilder`);
    const inspect = cli(["inspect", id, "--tool", "builder"]);
    expect(inspect.status).toBe(0);
    expect(JSON.parse(inspect.stdout)).toMatchObject({ kind: "resumable", lastCompletedStepId: "s" });
    expect(JSON.parse(cli(["inspect", id, "--tool", "intruder"]).stdout)).toMatchObject({ kind: "owned-by-other" });
    // The run is completed: pause and stop are refused (docs/run-workflow.md), and no request file is written.
    for (const args of [["pause", id, "coffee"], ["stop", id]]) {
      const r = cli(args);
      expect(r.status).toBe(1);
      expect(JSON.parse(r.stderr)).toMatchObject({ code: "RUN_FINISHED" });
    }
    expect(existsSync(path.join(repo, "ai_plan", id, "stop-request.json"))).toBe(false);
    expect(existsSync(path.join(repo, "ai_plan", id, "pause-request.json"))).toBe(false);
    expect(cli(["state", "show", "nope1234"]).status).toBe(1);
    expect(cli(["frobnicate"]).status).toBe(2);
  });
});
