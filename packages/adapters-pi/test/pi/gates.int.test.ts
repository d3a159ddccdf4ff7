/**
 * Issue 21 with the real CLI of both pi hosts and a scripted model: a turn budget pauses the run with the reason,
 * and `/workflow-resume turns=5` raises it (the run goes on to the raised limit); a rejection routes to onReject;
 * the same tool call repeated pauses it naming the call; a verify gate refuses `workflow_step next` with the
 * failing command's output until the command passes, then lets it through. The workflows are the documented
 * examples (examples/gates/workflows, docs/gates.md), used unchanged.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { readSession, startPi, type PiHost, type PiProcess } from "../../../../examples/pi/pi-process.js";
import { contentText, startScriptedModel, type ScriptedModel } from "../../../../examples/pi/scripted-model.js";
import { EXTENSION_FILE, HOSTS } from "./hosts.js";
import { waitBudget } from "./helpers/budget-record.js";
import { phasekit } from "../cli/helpers/run-cli.js";

const GATE_EXAMPLES = path.resolve(import.meta.dirname, "..", "..", "..", "..", "examples", "gates", "workflows");

interface Scene {
  root: string;
  cwd: string;
  sessionDir: string;
  model: ScriptedModel;
  pi: PiProcess;
}

async function scene(host: PiHost, continueFrom?: Scene): Promise<Scene> {
  if (continueFrom !== undefined) {
    const { root, cwd, sessionDir, model } = continueFrom;
    const pi = startPi({ host, cwd, agentDir: path.join(root, "home", ".pi", "agent"), sessionDir, extension: EXTENSION_FILE, baseUrl: model.baseUrl, continueSession: true, env: { PHASEKIT_COUNTDOWN_MS: "600000" } });
    return { ...continueFrom, pi };
  }
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "phasekit-pi-gates-"));
  const cwd = path.join(root, "project");
  fs.mkdirSync(path.join(cwd, ".pi"), { recursive: true });
  fs.cpSync(GATE_EXAMPLES, path.join(cwd, ".pi", "workflows"), { recursive: true });
  const model = await startScriptedModel();
  model.fallback = { text: "Waiting for you." };
  const sessionDir = path.join(root, "sessions");
  const pi = startPi({ host, cwd, agentDir: path.join(root, "home", ".pi", "agent"), sessionDir, extension: EXTENSION_FILE, baseUrl: model.baseUrl, env: { PHASEKIT_COUNTDOWN_MS: "600000" } });
  return { root, cwd, sessionDir, model, pi };
}

/** The plan folder of the scene's one run. */
const runDir = (s: Scene): string => path.join(s.cwd, "ai_plan", fs.readdirSync(path.join(s.cwd, "ai_plan"))[0] as string);

async function close(s: Scene): Promise<void> {
  await s.pi.kill("SIGKILL");
  await s.model.close();
  fs.rmSync(s.root, { recursive: true, force: true });
}

const states = (sessionDir: string) =>
  readSession(sessionDir)
    .filter((e) => e["customType"] === "workflow:state")
    .map((e) => e["data"] as { status: string; currentPath: Array<{ phaseIndex: number }> });
const notified = (pi: PiProcess, text: string) => pi.waitFor((l) => l["method"] === "notify" && String(l["message"]).includes(text), 60_000, `a notice with ${text}`);
/** Everything the model was sent after its last reply in request `i` (the tool results it is reacting to). */
const tailOf = (model: ScriptedModel, i: number): string => {
  const msgs = model.requests[i]?.messages ?? [];
  const last = msgs.map((m) => m.role).lastIndexOf("assistant");
  return msgs.slice(last + 1).map((m) => contentText(m.content)).join("\n");
};

describe.each(HOSTS)("pi $name (real CLI): budgets, loops, gates", ({ get }) => {
  let host: PiHost;
  beforeAll(() => {
    host = get();
  }, 300_000);

  it("a turn budget of 2 pauses the run with the reason; tools are refused while it is paused", async () => {
    const s = await scene(host);
    try {
      s.model.push({ tool: "bash", args: { command: "echo one" } }, { tool: "bash", args: { command: "echo two" } }, { tool: "bash", args: { command: "echo three" } }, { text: "ok" });
      s.pi.send({ type: "prompt", message: "/workflow budgeted Print some numbers" });
      const notice = await notified(s.pi, "budget of 2 turns is used up");
      expect(String(notice["message"])).toContain("the workflow Budgeted's budget of 2 turns is used up (2 used)");
      await s.model.waitForRequests(4);
      // The third bash call came after the pause: refused with the reason, never run.
      expect(tailOf(s.model, 3)).toContain("The workflow is paused (the workflow Budgeted's budget of 2 turns is used up (2 used))");
      expect(states(s.sessionDir).at(-1)?.status).toBe("paused");
      expect(await waitBudget(runDir(s), (r) => r.pi?.pausedFor !== undefined)).toMatchObject({ turns: 2 });
    } finally {
      await close(s);
    }
  }, 120_000);

  it("a paused turn budget is raised by /workflow-resume turns=5: the run goes on and pauses again at the raised limit", async () => {
    const s = await scene(host);
    try {
      s.model.push({ tool: "bash", args: { command: "echo one" } }, { tool: "bash", args: { command: "echo two" } }, { text: "ok" });
      s.pi.send({ type: "prompt", message: "/workflow budgeted Print some numbers" });
      await notified(s.pi, "budget of 2 turns is used up");
      await s.model.waitForRequests(3);
      expect(states(s.sessionDir).at(-1)?.status).toBe("paused");
      s.model.push({ tool: "bash", args: { command: "echo three" } }, { tool: "bash", args: { command: "echo four" } }, { tool: "bash", args: { command: "echo five" } }, { text: "stopped" });
      s.pi.send({ type: "prompt", message: "/workflow-resume turns=5" });
      const again = await notified(s.pi, "budget of 5 turns is used up");
      expect(String(again["message"])).toContain("the workflow Budgeted's budget of 5 turns is used up (5 used)");
      expect(states(s.sessionDir).at(-1)?.status).toBe("paused");
      // The counts' one record is the run's history (the session holds no entry of them).
      expect(await waitBudget(runDir(s), (r) => r.turns >= 5 && r.pi?.pausedFor !== undefined)).toMatchObject({ turns: 5, pi: { raised: { workflow: { turns: 5 } } } });
      expect(readSession(s.sessionDir).filter((e) => e["customType"] === "workflow:controls")).toEqual([]);
    } finally {
      await close(s);
    }
  }, 120_000);

  it("a rejection filed by phasekit approve --reject routes the run to onReject with the reason", async () => {
    const s = await scene(host);
    try {
      fs.writeFileSync(path.join(s.cwd, "done.txt"), "built\n");
      s.model.push({ tool: "workflow_step", args: { action: "next" } }, { tool: "workflow_step", args: { action: "next" } }, { text: "Waiting for approval." });
      s.pi.send({ type: "prompt", message: "/workflow gated Ship the thing" });
      await s.model.waitForRequests(3);
      const id = fs.readdirSync(path.join(s.cwd, "ai_plan"))[0] as string;
      const filed = phasekit(["--repo", s.cwd, "approve", id, "--name", "ship", "--reject", "the", "changelog", "is", "missing"]);
      expect(filed.code, filed.stderr).toBe(0);
      s.model.push({ tool: "workflow_step", args: { action: "next" } }, { text: "Back to building." });
      s.pi.send({ type: "prompt", message: "The person decided: go on." });
      await s.model.waitForRequests(5);
      const routed = tailOf(s.model, 4);
      expect(routed).toContain("↩ Ship → 🔨 Build: its approval was rejected, so the workflow sends the run back (then 🚀 Ship)");
      expect(routed).toContain("phase Ship was rejected: the changelog is missing");
      const last = readSession(s.sessionDir).filter((e) => e["customType"] === "workflow:state").at(-1)?.["data"] as { status: string; currentPath: Array<{ phaseIndex: number; loops: number }> };
      expect(last).toMatchObject({ status: "running", currentPath: [{ phaseIndex: 0, loops: 1 }] });
      expect(fs.existsSync(path.join(s.cwd, "ai_plan", id, "approve-request.json"))).toBe(false);
    } finally {
      await close(s);
    }
  }, 120_000);

  it("an approve gate is decided in pi with /workflow-approve: select Approve, type the payload, the run goes on", async () => {
    const s = await scene(host);
    try {
      fs.writeFileSync(path.join(s.cwd, "done.txt"), "built\n");
      s.model.push({ tool: "workflow_step", args: { action: "next" } }, { tool: "workflow_step", args: { action: "next" } }, { text: "Waiting for approval." });
      s.pi.send({ type: "prompt", message: "/workflow gated Ship the thing" });
      await s.model.waitForRequests(3);
      expect(tailOf(s.model, 2)).toContain("A person approves in pi with /workflow-approve");
      expect(s.pi.statuses("workflow-gate").at(-1)).toBe("⏸ Ship waits for a person's approval (/workflow-approve)");
      s.model.push({ tool: "workflow_step", args: { action: "next" } }, { text: "Shipped." });
      s.pi.send({ type: "prompt", message: "/workflow-approve" });
      const select = await s.pi.waitFor((l) => l["method"] === "select", 20_000, "the approve dialog");
      expect(select["options"]).toEqual(["Approve", "Reject"]);
      s.pi.send({ type: "extension_ui_response", id: select["id"], value: "Approve" });
      const input = await s.pi.waitFor((l) => l["method"] === "input", 20_000, "the payload dialog");
      s.pi.send({ type: "extension_ui_response", id: input["id"], value: '{"channel":"stable"}' });
      await s.model.waitForRequests(5);
      expect(tailOf(s.model, 4)).toContain("Ship → DONE");
      expect(states(s.sessionDir).at(-1)?.status).toBe("completed");
      expect(s.pi.statuses("workflow-gate").at(-1)).toBeUndefined();
    } finally {
      await close(s);
    }
  }, 120_000);

  it("the same tool call 3 times in a row pauses the run, naming the call", async () => {
    const s = await scene(host);
    try {
      s.model.push({ tool: "bash", args: { command: "ls" } }, { tool: "bash", args: { command: "ls" } }, { tool: "bash", args: { command: "ls" } }, { text: "hm" });
      s.pi.send({ type: "prompt", message: "/workflow looping Find the config" });
      const notice = await notified(s.pi, "no progress");
      expect(String(notice["message"])).toContain('no progress: the tool call bash {"command":"ls"} was made 3 times in a row with the same arguments');
      await s.model.waitForRequests(4);
      expect(tailOf(s.model, 3)).toContain("The workflow is paused: no progress: the tool call bash");
      expect(states(s.sessionDir).at(-1)?.status).toBe("paused");
    } finally {
      await close(s);
    }
  }, 120_000);

  it("a verify gate refuses next with the failing output until the command passes, then lets it through", async () => {
    const s = await scene(host);
    try {
      s.model.push(
        { tool: "workflow_step", args: { action: "next" } },
        { tool: "write", args: { path: "done.txt", content: "built\n" } },
        { tool: "workflow_step", args: { action: "next" } },
        { text: "shipped?" },
      );
      s.pi.send({ type: "prompt", message: "/workflow gated Build the thing" });
      await s.model.waitForRequests(4);
      const refused = tailOf(s.model, 1);
      expect(refused).toContain("next refused: phase Build cannot be left: the verify command `ls done.txt` failed.");
      expect(refused).toMatch(/done\.txt'?: No such file or directory/);
      expect(fs.readFileSync(path.join(s.cwd, "done.txt"), "utf8")).toBe("built\n");
      expect(tailOf(s.model, 3)).toContain("Build → 🚀 Ship");
      const last = states(s.sessionDir).at(-1);
      expect(last?.status).toBe("running");
      expect(last?.currentPath[0]?.phaseIndex).toBe(1);
    } finally {
      await close(s);
    }
  }, 120_000);

  it("an approve gate waits for a person; phasekit approve from another process, pi killed in between, -c goes on", async () => {
    const s = await scene(host);
    let again: Scene | undefined;
    try {
      fs.writeFileSync(path.join(s.cwd, "done.txt"), "built\n"); // Build's verify passes at once
      s.model.push({ tool: "workflow_step", args: { action: "next" } }, { tool: "workflow_step", args: { action: "next" } }, { text: "Waiting for approval." });
      s.pi.send({ type: "prompt", message: "/workflow gated Ship the thing" });
      await s.model.waitForRequests(3);
      const id = fs.readdirSync(path.join(s.cwd, "ai_plan"))[0] as string;
      const waiting = tailOf(s.model, 2);
      expect(waiting).toContain("next refused: phase Ship waits for a person's approval: Ship it? Choose the release channel.");
      expect(waiting).toContain(`phasekit approve ${id} --name ship --data '<JSON>'`);
      // A person approves from a shell while pi runs; pi is then killed before it reads the decision.
      const filed = phasekit(["--repo", s.cwd, "approve", id, "--name", "ship", "--data", '{"channel":"beta"}']);
      expect(filed.code, filed.stderr).toBe(0);
      await s.pi.kill("SIGKILL");
      again = await scene(host, s);
      s.model.push({ tool: "workflow_step", args: { action: "next" } }, { text: "Shipped." });
      again.pi.send({ type: "prompt", message: "It is approved: go on." });
      await s.model.waitForRequests(5);
      expect(tailOf(s.model, 4)).not.toContain("refused");
      const end = Date.now() + 20_000;
      while (states(s.sessionDir).at(-1)?.status !== "completed" && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      expect(states(s.sessionDir).at(-1)?.status).toBe("completed");
      // The decision was consumed once the advance was on disk.
      expect(fs.existsSync(path.join(s.cwd, "ai_plan", id, "approve-request.json"))).toBe(false);
    } finally {
      await again?.pi.kill("SIGKILL");
      await close(s);
    }
  }, 120_000);
});
