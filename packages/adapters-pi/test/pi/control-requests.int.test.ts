/**
 * Real pi CLI, both hosts: `phasekit pause <run>` and `phasekit stop <run>`, filed from another terminal while pi
 * drives the run, are honoured by the extension at its next step boundary: a pause keeps the run's place
 * (paused in the session and the plan folder, `/workflow-resume` goes on), a stop ends it cancelled.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { PiHost } from "../../../../examples/pi/pi-process.js";
import { HOSTS } from "./hosts.js";
import { e2eProject, notices, until } from "./e2e/project.js";

const BIN = path.join(import.meta.dirname, "..", "..", "bin", "phasekit.js");
const phasekit = (cwd: string, ...args: string[]): string => execFileSync(process.execPath, [BIN, ...args], { cwd, encoding: "utf8" });
const folderStatus = (cwd: string, id: string): string => (JSON.parse(fs.readFileSync(path.join(cwd, "ai_plan", id, "workflow.json"), "utf8")) as { status: string }).status;

describe.each(HOSTS)("pi $name: pause and stop filed from the CLI", ({ get }) => {
  let host: PiHost;
  beforeAll(() => {
    host = get();
  }, 300_000);

  it("pause: the run pauses at the next prompt, the model is not moved on; /workflow-resume goes on; stop: it ends cancelled", async () => {
    const p = await e2eProject(host, "control");
    try {
      p.model.push({ text: "planning" });
      const pi = p.start();
      pi.send({ type: "prompt", message: "/workflow ship Add a flag" });
      const runs = path.join(p.cwd, "ai_plan");
      await until(() => fs.existsSync(runs) && fs.readdirSync(runs).length === 1, "the run folder");
      const id = fs.readdirSync(runs)[0] as string;
      await pi.waitFor((l) => l["type"] === "agent_end", 20_000, "the first agent run's end");

      phasekit(p.cwd, "pause", id, "lunch");
      p.model.push({ tool: "workflow_step", args: { action: "next" } }, { text: "waiting" });
      pi.send({ type: "prompt", message: "Go on." });
      await until(() => p.lastState()?.["status"] === "paused", "the run paused in the session");
      await until(() => folderStatus(p.cwd, id) === "paused", "the run paused in its plan folder");
      await until(() => notices(pi).join("\n").includes("paused from outside this session (lunch)"), "the pause notice");
      await until(() => p.model.requests.length >= 3, "the model's reply to the refused step");
      expect((p.lastState()?.["currentPath"] as Array<{ phaseIndex: number }>).map((s) => s.phaseIndex)).toEqual([0]);
      expect(fs.existsSync(path.join(runs, id, "pause-request.json"))).toBe(false);

      await pi.waitFor((l) => l["type"] === "agent_end" && pi.lines.filter((x) => x["type"] === "agent_end").length >= 2, 20_000, "the second agent run's end");
      p.model.push({ text: "back at it" });
      pi.send({ type: "prompt", message: `/workflow-resume ${id}` });
      await until(() => p.lastState()?.["status"] === "running", "the run running again");
      await until(() => folderStatus(p.cwd, id) === "running", "the run running again in its plan folder");
      await pi.waitFor((l) => l["type"] === "agent_end" && pi.lines.filter((x) => x["type"] === "agent_end").length >= 3, 20_000, "the third agent run's end");

      phasekit(p.cwd, "stop", id, "wrong", "task");
      p.model.push({ text: "ok" });
      pi.send({ type: "prompt", message: "Go on." });
      await until(() => p.lastState()?.["status"] === "cancelled", "the run cancelled in the session");
      await until(() => folderStatus(p.cwd, id) === "cancelled", "the run cancelled in its plan folder");
      await until(() => notices(pi).join("\n").includes("stopped from outside this session (wrong task)"), "the stop notice");
    } finally {
      await p.close();
    }
  }, 50_000);
});
