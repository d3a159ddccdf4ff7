/**
 * Issue 21 with the real CLI of both pi hosts and a scripted model: a decision made with `/workflow-approve` is
 * filed through the run's store (as `phasekit approve` files one), so pi killed before `next` takes it loses
 * nothing: `pi -c` goes on with the decision, and it is consumed once the advance is on disk.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { readSession, startPi, type PiHost, type PiProcess } from "../../../../examples/pi/pi-process.js";
import { contentText, startScriptedModel, type ScriptedModel } from "../../../../examples/pi/scripted-model.js";
import { EXTENSION_FILE, HOSTS } from "./hosts.js";

const GATE_EXAMPLES = path.resolve(import.meta.dirname, "..", "..", "..", "..", "examples", "gates", "workflows");

interface Scene {
  root: string;
  cwd: string;
  sessionDir: string;
  model: ScriptedModel;
}

const start = (host: PiHost, s: Scene, continueSession: boolean): PiProcess =>
  startPi({ host, cwd: s.cwd, agentDir: path.join(s.root, "home", ".pi", "agent"), sessionDir: s.sessionDir, extension: EXTENSION_FILE, baseUrl: s.model.baseUrl, continueSession, env: { PHASEKIT_COUNTDOWN_MS: "600000" } });

const states = (sessionDir: string) =>
  readSession(sessionDir)
    .filter((e) => e["customType"] === "workflow:state")
    .map((e) => e["data"] as { status: string });
const tailOf = (model: ScriptedModel, i: number): string => {
  const msgs = model.requests[i]?.messages ?? [];
  const last = msgs.map((m) => m.role).lastIndexOf("assistant");
  return msgs.slice(last + 1).map((m) => contentText(m.content)).join("\n");
};

describe.each(HOSTS)("pi $name (real CLI): /workflow-approve is durable", ({ get }) => {
  let host: PiHost;
  beforeAll(() => {
    host = get();
  }, 300_000);

  it("the decision is filed in the run's store; pi killed before next, -c goes on with it", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "phasekit-pi-approve-"));
    const cwd = path.join(root, "project");
    fs.mkdirSync(path.join(cwd, ".pi"), { recursive: true });
    fs.cpSync(GATE_EXAMPLES, path.join(cwd, ".pi", "workflows"), { recursive: true });
    fs.writeFileSync(path.join(cwd, "done.txt"), "built\n"); // Build's verify passes at once
    const model = await startScriptedModel();
    model.fallback = { text: "Waiting for you." };
    const s: Scene = { root, cwd, sessionDir: path.join(root, "sessions"), model };
    let pi = start(host, s, false);
    try {
      model.push({ tool: "workflow_step", args: { action: "next" } }, { tool: "workflow_step", args: { action: "next" } }, { text: "Waiting for approval." });
      pi.send({ type: "prompt", message: "/workflow gated Ship the thing" });
      await model.waitForRequests(3);
      expect(tailOf(model, 2)).toContain("A person approves in pi with /workflow-approve");
      const id = fs.readdirSync(path.join(cwd, "ai_plan"))[0] as string;
      // The person decides in pi; the model's reply to "approved" is plain text, so next has not run yet.
      pi.send({ type: "prompt", message: '/workflow-approve {"channel":"stable"}' });
      await model.waitForRequests(4);
      expect(tailOf(model, 3)).toContain("The person approved phase Ship.");
      const filed = JSON.parse(fs.readFileSync(path.join(cwd, "ai_plan", id, "approve-request.json"), "utf8")) as Record<string, unknown>;
      expect(filed).toMatchObject({ signal: "approve", reason: "approved in pi", approval: { name: "ship", decision: "approve", data: { channel: "stable" } } });
      await pi.kill("SIGKILL");
      pi = start(host, s, true);
      model.push({ tool: "workflow_step", args: { action: "next" } }, { text: "Shipped." });
      pi.send({ type: "prompt", message: "It is approved: go on." });
      await model.waitForRequests(6);
      expect(tailOf(model, 5)).not.toContain("refused");
      expect(tailOf(model, 5)).toContain("Ship → DONE");
      const end = Date.now() + 20_000;
      while (states(s.sessionDir).at(-1)?.status !== "completed" && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      expect(states(s.sessionDir).at(-1)?.status).toBe("completed");
      expect(fs.existsSync(path.join(cwd, "ai_plan", id, "approve-request.json"))).toBe(false);
    } finally {
      await pi.kill("SIGKILL");
      await model.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  }, 120_000);
});
