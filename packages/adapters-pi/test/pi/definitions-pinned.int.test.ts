/**
 * Real pi CLI, both hosts: a definition edited under a live run (a phase inserted before the current one) never
 * moves the run silently. The user sees the diff and chooses: move to the new definitions (at the next tool
 * call; the run stays in its phase, found by id), keep the pinned ones (at `pi -c`), restart the scope, or cancel.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { PiHost, PiProcess } from "../../../../examples/pi/pi-process.js";
import { contentText } from "../../../../examples/pi/scripted-model.js";
import { HOSTS } from "./hosts.js";
import { e2eProject, until, type E2eProject } from "./e2e/project.js";

/** Inserts a Lint phase before Test in the nested `check` workflow. */
function insertLint(p: E2eProject): void {
  const dir = path.join(p.cwd, ".pi", "workflows", "check");
  fs.writeFileSync(path.join(dir, "lint.md"), "---\nid: lint\nname: Lint\nemoji: \"🧹\"\n---\nRun the linter.\n");
  const yaml = path.join(dir, "workflow.yaml");
  fs.writeFileSync(yaml, fs.readFileSync(yaml, "utf8").replace("  - test.md", "  - lint.md\n  - test.md"));
}

/** Starts the run and walks it into Test (check, phase 1). */
async function intoTest(p: E2eProject): Promise<PiProcess> {
  p.model.push({ tool: "workflow_step", args: { action: "next" } }, { text: "testing" });
  const pi = p.start();
  pi.send({ type: "prompt", message: "/workflow ship Add a flag" });
  await until(() => (p.lastState()?.["currentPath"] as unknown[] | undefined)?.length === 2, "the run in Test");
  await pi.waitFor((l) => l["type"] === "agent_end", 20_000, "the agent run's end");
  return pi;
}

const pathOf = (p: E2eProject): number[] => ((p.lastState()?.["currentPath"] ?? []) as Array<{ phaseIndex: number }>).map((s) => s.phaseIndex);

async function choose(pi: PiProcess, option: string): Promise<Record<string, unknown>> {
  const ask = await pi.waitFor((l) => l["method"] === "select", 20_000, "the definitions dialog");
  const options = ask["options"] as string[];
  const value = options.find((o) => o.startsWith(option));
  expect(value, `${option} among ${options.join(" | ")}`).toBeDefined();
  pi.send({ type: "extension_ui_response", id: ask["id"], value });
  return ask;
}

describe.each(HOSTS)("pi $name: definitions pinned to the run", ({ get }) => {
  let host: PiHost;
  beforeAll(() => {
    host = get();
  }, 300_000);

  it("edited under a live run: at the next tool call the user sees the diff; 'move' keeps the run in Test, found by id", async () => {
    const p = await e2eProject(host, "pin-move");
    try {
      const pi = await intoTest(p);
      insertLint(p);
      await new Promise((r) => setTimeout(r, 200)); // the folder watch fires
      p.model.push({ tool: "workflow_step", args: { action: "status" } }, { text: "ok" });
      pi.send({ type: "prompt", message: "Where are we?" });
      const ask = await choose(pi, "Move to the new definitions");
      expect(String(ask["title"])).toContain("check: changed (lint added)");
      await p.model.waitForRequests(4);
      const status = p.model.requests[3]?.messages.map((m) => contentText(m.content)).join("\n") ?? "";
      expect(status).toContain("🧪 Test");
      await until(() => pathOf(p).join() === "1,1", "the run at Test's new index");
    } finally {
      await p.close();
    }
  }, 40_000);

  it("at pi -c: 'keep' goes on with the pinned definitions (Test is still 1 of 2)", async () => {
    const p = await e2eProject(host, "pin-keep");
    try {
      const a = await intoTest(p);
      await a.kill("SIGKILL");
      insertLint(p);
      const b = p.start({ continueSession: true });
      await choose(b, "Keep the definitions");

      await b.waitFor((l) => l["method"] === "setStatus" && l["statusText"] === "Ship a change > Check [2/3] > 🧪 Test [1/2]", 20_000, "the pinned status");
      expect(pathOf(p)).toEqual([1, 0]);
      expect(b.statuses().filter((s) => s !== undefined).some((s) => s?.includes("Lint"))).toBe(false);
    } finally {
      await p.close();
    }
  }, 40_000);

  it("at pi -c: 'restart' restarts the current scope on the new definitions (at Lint)", async () => {
    const p = await e2eProject(host, "pin-restart");
    try {
      const a = await intoTest(p);
      await a.kill("SIGKILL");
      insertLint(p);
      const b = p.start({ continueSession: true });
      await choose(b, "Restart the current scope");
      await b.waitFor((l) => l["method"] === "setStatus" && l["statusText"] === "Ship a change > Check [2/3] > 🧹 Lint [1/3]", 20_000, "the restarted scope");
      expect(pathOf(p)).toEqual([1, 0]);
    } finally {
      await p.close();
    }
  }, 40_000);

  it("/workflow-resume in another session (nothing of the run on its branch): 'keep' is offered and the run goes on pinned", async () => {
    const p = await e2eProject(host, "pin-other-session");
    try {
      const a = await intoTest(p);
      const id = String(p.lastState()?.["taskId"]);
      await a.kill("SIGKILL");
      insertLint(p);
      p.model.push({ text: "resuming" });
      const b = p.start({ sessionDir: path.join(p.root, "other-sessions") });
      b.send({ type: "prompt", message: `/workflow-resume ${id}` });
      const ask = await choose(b, "Keep the definitions");
      expect(ask["options"]).toEqual(["Keep the definitions the run started with", "Move to the new definitions (same phase)", "Restart the current scope with the new definitions", "Cancel the run"]);
      expect(String(ask["title"])).toContain("check: changed (lint added)");
      await b.waitFor((l) => l["method"] === "setStatus" && l["statusText"] === "Ship a change > Check [2/3] > 🧪 Test [1/2]", 20_000, "the pinned status");
      expect(b.statuses().some((s) => s?.includes("Lint") === true)).toBe(false);
    } finally {
      await p.close();
    }
  }, 40_000);

  it("at pi -c: 'cancel' ends the run", async () => {
    const p = await e2eProject(host, "pin-cancel");
    try {
      const a = await intoTest(p);
      await a.kill("SIGKILL");
      insertLint(p);
      const b = p.start({ continueSession: true });
      await choose(b, "Cancel the run");
      await until(() => p.lastState()?.["status"] === "cancelled", "the run cancelled");
    } finally {
      await p.close();
    }
  }, 40_000);
});
