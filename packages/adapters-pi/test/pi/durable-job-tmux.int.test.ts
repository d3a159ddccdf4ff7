/**
 * Real pi CLI in its interactive TUI, both hosts, under tmux: the documented example of another extension that
 * runs its own durable job with runWorkflow (examples/pi/durable-job-extension.ts) reports through pi's UI.
 * The screen shows the job's result and never a raw reporter line (`info: ✓ collect`), which the default
 * stderr reporter draws over pi's screen.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { writeModels, type PiHost } from "../../../../examples/pi/pi-process.js";
import { HOSTS } from "./hosts.js";
import { until } from "./e2e/project.js";

const EXAMPLE = path.resolve(import.meta.dirname, "..", "..", "..", "..", "examples", "pi", "durable-job-extension.ts");

describe.each(HOSTS)("pi $name TUI under tmux: a durable job of another extension", ({ get }) => {
  let host: PiHost;
  beforeAll(() => {
    host = get();
  }, 300_000);

  it("/release-notes runs its runWorkflow job; progress goes through pi's UI, nothing raw on the screen", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "phasekit-tmux-"));
    const socket = `phasekit-${process.pid}-${host.name}`;
    const tmux = (...args: string[]): string => execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8" });
    const screen = (): string => tmux("capture-pane", "-p", "-t", "pi");
    try {
      const cwd = path.join(root, "project");
      const agentDir = path.join(root, "home", ".pi", "agent");
      fs.mkdirSync(cwd, { recursive: true });
      writeModels(agentDir, "http://127.0.0.1:9/v1"); // no model call happens: the command runs on its own
      const env = `PI_CODING_AGENT_DIR=${agentDir} HOME=${path.dirname(agentDir)} PI_OFFLINE=1`;
      const cmd = `env ${env} ${host.node} ${host.cli} --provider scripted --model scripted-1 -e ${EXAMPLE} --no-extensions --no-skills --no-context-files --session-dir ${path.join(root, "s")}`;
      tmux("new-session", "-d", "-s", "pi", "-x", "120", "-y", "40", "-c", cwd, cmd);
      await until(() => screen().includes("durable-job-extension"), "pi's start-up screen", 20_000);
      tmux("send-keys", "-t", "pi", "/release-notes 1.2.0", "Enter");
      await until(() => screen().includes("release notes 1.2.0: completed"), "the job's result on screen", 20_000);
      const meta = JSON.parse(fs.readFileSync(path.join(cwd, "ai_plan", "release-notes-1-2-0", "workflow.json"), "utf8")) as { status: string };
      expect(meta.status).toBe("completed");
      expect(screen()).not.toMatch(/^(info|warning|error): /m);
    } finally {
      try {
        tmux("kill-server");
      } catch {
        // already gone
      }
      fs.rmSync(root, { recursive: true, force: true });
    }
  }, 45_000);
});
