/**
 * Real pi CLI, both hosts: a pause its filer stamped before the run's paused end (it read the run running, and its
 * write landed after that end had cleared the pauses) does not pause the run once `/workflow-resume` resumed it:
 * the extension reads the run's requests by runWorkflow's rule (run/control-requests.ts `controlForRun`). Before,
 * the resumed run's next workflow_step took that pause and paused it again. pi/superseded-requests.test.ts has
 * the other takes (another session's /workflow-resume <id>, a new session's claim) on the fake host.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { PiHost } from "../../../../examples/pi/pi-process.js";
import { HOSTS } from "./hosts.js";
import { e2eProject, notices, until } from "./e2e/project.js";
import { newControlRequest, writeControlRequest } from "../../src/store/control-signals.js";

const BIN = path.join(import.meta.dirname, "..", "..", "bin", "phasekit.js");
const phasekit = (cwd: string, ...args: string[]): string => execFileSync(process.execPath, [BIN, ...args], { cwd, encoding: "utf8" });
const folder = (cwd: string, id: string) => JSON.parse(fs.readFileSync(path.join(cwd, "ai_plan", id, "workflow.json"), "utf8")) as { status: string; generation: number };

describe.each(HOSTS)("pi $name: a late pause from before the paused end", ({ get }) => {
  let host: PiHost;
  beforeAll(() => {
    host = get();
  }, 300_000);

  it("does not pause the run /workflow-resume resumed: its next workflow_step moves it on", async () => {
    const p = await e2eProject(host, "late-pause");
    try {
      p.model.push({ text: "planning" });
      const pi = p.start();
      pi.send({ type: "prompt", message: "/workflow ship Add a flag" });
      const runs = path.join(p.cwd, "ai_plan");
      await until(() => fs.existsSync(runs) && fs.readdirSync(runs).length === 1, "the run folder");
      const id = fs.readdirSync(runs)[0] as string;
      const agentEnds = () => pi.lines.filter((x) => x["type"] === "agent_end").length;
      await pi.waitFor((l) => l["type"] === "agent_end", 20_000, "the first agent run's end");

      const seen = folder(p.cwd, id).generation;
      phasekit(p.cwd, "pause", id, "lunch");
      p.model.push({ tool: "workflow_step", args: { action: "next" } }, { text: "waiting" });
      pi.send({ type: "prompt", message: "Go on." });
      await until(() => folder(p.cwd, id).status === "paused", "the run paused in its plan folder");
      await pi.waitFor((l) => l["type"] === "agent_end" && agentEnds() >= 2, 20_000, "the second agent run's end");
      // The late filer read the run running at `seen`; its write lands now, after the paused end.
      await writeControlRequest(path.join(runs, id), newControlRequest("pause", "late pause", undefined, seen));

      p.model.push({ tool: "workflow_step", args: { action: "next" } }, { text: "planned" });
      pi.send({ type: "prompt", message: `/workflow-resume ${id}` });
      await pi.waitFor((l) => l["type"] === "agent_end" && agentEnds() >= 3, 20_000, "the third agent run's end");
      expect(p.lastState()?.["status"]).toBe("running");
      expect((p.lastState()?.["currentPath"] as Array<{ phaseIndex: number }>).map((s) => s.phaseIndex)).toEqual([1, 0]);
      expect(folder(p.cwd, id).status).toBe("running");
      expect(notices(pi).join("\n")).not.toContain("late pause");
      expect(fs.existsSync(path.join(runs, id, "pause-request.json"))).toBe(false);
    } finally {
      await p.close();
    }
  }, 60_000);
});
