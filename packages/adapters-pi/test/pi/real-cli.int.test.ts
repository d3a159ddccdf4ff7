/**
 * End to end with the real CLI of both pi hosts and a scripted model on 127.0.0.1: the built default extension,
 * the example workflow folder in pi-workflows 1.0.0's format used unchanged, a blocked tool, SIGKILL mid-workflow,
 * `-c` resuming at the same phase, one completion message, and a bounded number of reminders.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { EXAMPLE_WORKFLOWS, runShipScenario } from "../../../../examples/pi/ship-scenario.js";
import { readSession, startPi, type PiHost } from "../../../../examples/pi/pi-process.js";
import { contentText, startScriptedModel } from "../../../../examples/pi/scripted-model.js";
import { EXTENSION_FILE, HOSTS } from "./hosts.js";

const customMessages = (session: ReadonlyArray<Record<string, unknown>>, type: string) => session.filter((e) => e["type"] === "custom_message" && e["customType"] === type);

describe.each(HOSTS)("pi $name (real CLI)", ({ get }) => {
  let host: PiHost;
  beforeAll(() => {
    host = get();
  }, 300_000);

  it("walks the example workflow: blocked tool, SIGKILL, -c resumes at the same phase, one completion", async () => {
    const r = await runShipScenario({ host, extension: EXTENSION_FILE });
    const [first, resumed, again] = r.statuses as [Array<string | undefined>, Array<string | undefined>, Array<string | undefined>];
    // The status bar shows the first phase at once (not only at turn_end), then the nested phase.
    expect(first).toContain("Ship a change > 📋 Plan [1/3]");
    expect(first).toContain("Ship a change > Check [2/3] > 🧪 Test [1/2]");
    // Plan hides write (setActiveTools), so the model is not offered it; a call anyway is refused (by the host
    // as unknown, or with the templated reason when something re-enabled it).
    expect(r.requests[0]?.tools).not.toContain("write");
    const afterWrite = r.requests[1]?.messages.map((m) => contentText(m.content)).join("\n") ?? "";
    expect(afterWrite).toMatch(/Tool write not found|\[workflow\] The tool "write" is blocked during the Plan phase\./);
    // Within one run the model learns the next phase right after workflow_step, exactly once: 0.73.1 in the
    // tool result, 1.5.x as a hidden context message appended at the turn boundary.
    const msgs = r.requests[2]?.messages ?? [];
    const lastAssistant = msgs.map((m) => m.role).lastIndexOf("assistant");
    const tail = msgs.slice(lastAssistant + 1).map((m) => contentText(m.content)).join("\n");
    expect(msgs[lastAssistant + 1]?.role).toBe("tool");
    expect(tail).toContain("✓ Advanced: Plan → 🧪 Test");
    expect(tail.split("[Workflow path: Ship a change > Check ▸ 🧪 Test]")).toHaveLength(2);
    expect(tail).toContain("Run the tests that cover the change.");
    // -c: state and status rebuilt at session start, before any prompt, at the phase where pi was killed.
    expect(resumed[0]).toBe("Ship a change > Check [2/3] > 🧪 Test [1/2]");
    const resumedRequest = r.requests[r.firstRequestAfterResume]?.messages.map((m) => contentText(m.content)).join("\n") ?? "";
    expect(resumedRequest).toContain("[Workflow path: Ship a change > Check ▸ 🧪 Test]");
    // Exactly one completion message, even after another -c.
    expect(customMessages(r.session, "workflow:complete")).toHaveLength(1);
    expect(again.filter((s) => s !== undefined)).toEqual([]);
    const states = r.session.filter((e) => e["customType"] === "workflow:state").map((e) => e["data"] as { status: string; completionNotified: boolean });
    expect(states.at(-1)).toMatchObject({ status: "completed", completionNotified: true });
  }, 180_000);

  it("a model that never calls the tool gets a bounded number of reminders", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "phasekit-pi-remind-"));
    const cwd = path.join(root, "project");
    fs.mkdirSync(path.join(cwd, ".pi"), { recursive: true });
    fs.cpSync(EXAMPLE_WORKFLOWS, path.join(cwd, ".pi", "workflows"), { recursive: true });
    const model = await startScriptedModel();
    model.fallback = { text: "I think I am finished." };
    const sessionDir = path.join(root, "sessions");
    const pi = startPi({ host, cwd, agentDir: path.join(root, "home", ".pi", "agent"), sessionDir, extension: EXTENSION_FILE, baseUrl: model.baseUrl, env: { PHASEKIT_COUNTDOWN_MS: "150", PHASEKIT_MAX_REMINDERS: "2" } });
    try {
      pi.send({ type: "prompt", message: "/workflow ship Add a --version flag" });
      const stopped = (): boolean => customMessages(readSession(sessionDir), "workflow:notice").some((m) => String(m["content"]).includes("stopped reminding"));
      const end = Date.now() + 60_000;
      while (!stopped() && Date.now() < end) await new Promise((res) => setTimeout(res, 100));
      expect(stopped()).toBe(true);
      await new Promise((res) => setTimeout(res, 1500));
      // The first prompt, then two reminders; nothing after the cap.
      expect(model.requests).toHaveLength(3);
      const reminder = model.requests[1]?.messages.map((m) => contentText(m.content)).join("\n") ?? "";
      expect(reminder).toContain("is still active. Current phase: 📋 Plan.");
    } finally {
      await pi.kill("SIGKILL");
      await model.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  }, 120_000);

  it("a run continues in a brand-new session with /workflow-resume <id>; while another session drives it, that is refused", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "phasekit-pi-resume-"));
    const cwd = path.join(root, "project");
    fs.mkdirSync(path.join(cwd, ".pi"), { recursive: true });
    fs.cpSync(EXAMPLE_WORKFLOWS, path.join(cwd, ".pi", "workflows"), { recursive: true });
    const model = await startScriptedModel();
    const agentDir = path.join(root, "home", ".pi", "agent");
    const common = { host, cwd, agentDir, extension: EXTENSION_FILE, baseUrl: model.baseUrl, env: { PHASEKIT_COUNTDOWN_MS: "60000" } };
    const a = startPi({ ...common, sessionDir: path.join(root, "a") });
    let b: ReturnType<typeof startPi> | undefined;
    try {
      model.push({ tool: "workflow_step", args: { action: "next" } }, { text: "testing…", hold: true });
      a.send({ type: "prompt", message: "/workflow ship Add a flag" });
      await model.waitForRequests(2);
      const runs = path.join(cwd, "ai_plan");
      const end = Date.now() + 20_000;
      const heldState = () => {
        const id = fs.existsSync(runs) ? fs.readdirSync(runs)[0] : undefined;
        if (id === undefined) return undefined;
        const meta = JSON.parse(fs.readFileSync(path.join(runs, id, "workflow.json"), "utf8")) as { state: { currentPath: Array<{ phaseIndex: number }> } };
        return { id, meta };
      };
      while ((heldState()?.meta.state.currentPath.length ?? 0) < 2 && Date.now() < end) await new Promise((res) => setTimeout(res, 50));
      const id = heldState()?.id as string;
      expect(id).toMatch(/^[0-9a-z]{8}$/);

      b = startPi({ ...common, sessionDir: path.join(root, "b") });
      b.send({ type: "prompt", message: `/workflow-resume ${id}` });
      const refused = await b.waitFor((l) => l["method"] === "notify" && String(l["message"]).includes(id), 30_000, "the refusal");
      expect(String(refused["message"])).toContain("is being driven elsewhere");
      expect(b.statuses().filter((s) => s !== undefined)).toEqual([]);

      await a.kill("SIGKILL");
      model.release();
      model.push({ tool: "workflow_step", args: { action: "next" } }, { text: "reviewing" });
      b.send({ type: "prompt", message: `/workflow-resume ${id}` });
      await b.waitFor((l) => l["method"] === "setStatus" && String(l["statusText"]).includes("🔍 Review"), 30_000, "Review in session B");
      expect(b.statuses().filter((s) => s !== undefined)[0]).toBe("Ship a change > Check [2/3] > 🧪 Test [1/2]");
      const meta = JSON.parse(fs.readFileSync(path.join(runs, id, "workflow.json"), "utf8")) as { state: { currentPath: Array<{ phaseIndex: number }> } };
      await new Promise((res) => setTimeout(res, 200));
      const after = JSON.parse(fs.readFileSync(path.join(runs, id, "workflow.json"), "utf8")) as { state: { currentPath: Array<{ workflowKey: string; phaseIndex: number }> } };
      expect(after.state.currentPath.map((s) => [s.workflowKey, s.phaseIndex])).toEqual([["ship", 1], ["check", 1]]);
      expect(meta).toBeDefined();
    } finally {
      await a.kill("SIGKILL");
      await b?.kill("SIGKILL");
      await model.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  }, 120_000);
});
