/**
 * Real pi CLI, both hosts, RPC mode: an armed cancel ends with the agent run that armed it; the countdown widget
 * is cleared for the RPC client when the session changes; a run replaced by /workflow is marked cancelled in its
 * plan folder instead of staying `running`.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { PiHost } from "../../../../examples/pi/pi-process.js";
import { contentText } from "../../../../examples/pi/scripted-model.js";
import { HOSTS } from "./hosts.js";
import { e2eProject, until } from "./e2e/project.js";

const isWidget = (key: string) => (l: Record<string, unknown>): boolean => l["method"] === "setWidget" && l["widgetKey"] === key;

describe.each(HOSTS)("pi $name: run lifecycle", ({ get }) => {
  let host: PiHost;
  beforeAll(() => {
    host = get();
  }, 300_000);

  it("a cancel armed in one agent run does not carry over: the next single cancel only arms again", async () => {
    const p = await e2eProject(host, "arm");
    try {
      p.model.push({ tool: "workflow_step", args: { action: "cancel" } }, { text: "Asked to confirm; stopping here." });
      const pi = p.start();
      pi.send({ type: "prompt", message: "/workflow ship Add a flag" });
      await p.model.waitForRequests(2);
      await pi.waitFor((l) => l["type"] === "agent_end", 20_000, "the first agent run's end");
      p.model.push({ tool: "workflow_step", args: { action: "cancel" } }, { text: "ok" });
      pi.send({ type: "prompt", message: "Keep going with the plan." });
      await p.model.waitForRequests(4);
      const afterSecondCancel = p.model.requests[3]?.messages.map((m) => contentText(m.content)).join("\n") ?? "";
      expect(afterSecondCancel.split("Confirm cancellation")).toHaveLength(3); // armed twice, never confirmed
      expect(afterSecondCancel).not.toContain("Workflow cancelled");
      await pi.waitFor((l) => l["type"] === "agent_end" && pi.lines.filter((x) => x["type"] === "agent_end").length >= 2, 20_000, "the second agent run's end");
      expect(p.lastState()?.["status"]).toBe("running");
    } finally {
      await p.close();
    }
  }, 40_000);

  it("the countdown widget is cleared for the RPC client when the session changes", async () => {
    const p = await e2eProject(host, "widget");
    try {
      p.model.push({ text: "I stop here." });
      const pi = p.start();
      pi.send({ type: "prompt", message: "/workflow ship Add a flag" });
      await pi.waitFor((l) => isWidget("workflow-countdown")(l) && Array.isArray(l["widgetLines"]), 20_000, "the countdown widget");
      const shownAt = pi.lines.length;
      pi.send({ type: "new_session", id: "n1" });
      await pi.waitFor((l) => l["type"] === "response" && l["command"] === "new_session", 20_000, "the new session");
      await until(() => pi.lines.slice(shownAt).some((l) => isWidget("workflow-countdown")(l) && l["widgetLines"] === undefined), "the countdown cleared", 5_000);
    } finally {
      await p.close();
    }
  }, 40_000);

  it("a run replaced by /workflow is cancelled in its plan folder, and its lock let go", async () => {
    const p = await e2eProject(host, "replace");
    try {
      p.model.push({ text: "planning A" });
      const pi = p.start();
      pi.send({ type: "prompt", message: "/workflow ship First task" });
      await p.model.waitForRequests(1);
      const plans = path.join(p.cwd, "ai_plan");
      await until(() => fs.existsSync(plans) && fs.readdirSync(plans).length === 1, "the first run's folder");
      const first = fs.readdirSync(plans)[0] as string;
      await pi.waitFor((l) => l["type"] === "agent_end", 20_000, "the first agent run's end");
      p.model.push({ text: "planning B" });
      pi.send({ type: "prompt", message: "/workflow ship Second task" });
      const ask = await pi.waitFor((l) => l["method"] === "confirm", 20_000, "the replace confirmation");
      pi.send({ type: "extension_ui_response", id: ask["id"], confirmed: true });
      await until(() => fs.readdirSync(plans).length === 2, "the second run's folder");
      const meta = JSON.parse(fs.readFileSync(path.join(plans, first, "workflow.json"), "utf8")) as { status: string };
      expect(meta.status).toBe("cancelled");
      expect(fs.existsSync(path.join(plans, first, ".lock"))).toBe(false);
    } finally {
      await p.close();
    }
  }, 40_000);
});
