/**
 * Issue 21 with the real CLI of both pi hosts and a scripted model: what a pi run spends is kept in the run's
 * history, not only in its session. `phasekit show` shows the spent turns of a pi run, and a run resumed in
 * another session (`/workflow-resume <id>` after pi was killed) goes on counting from its total: the turn
 * budget of 2 runs out on the first turn there.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { readSession, startPi, type PiHost, type PiProcess } from "../../../../examples/pi/pi-process.js";
import { startScriptedModel, type ScriptedModel } from "../../../../examples/pi/scripted-model.js";
import { EXTENSION_FILE, HOSTS } from "./hosts.js";
import { waitBudget } from "./helpers/budget-record.js";
import { phasekit } from "../cli/helpers/run-cli.js";

const GATE_EXAMPLES = path.resolve(import.meta.dirname, "..", "..", "..", "..", "examples", "gates", "workflows");

const start = (host: PiHost, root: string, cwd: string, model: ScriptedModel, sessionDir: string, continueSession = false): PiProcess =>
  startPi({ host, cwd, agentDir: path.join(root, "home", ".pi", "agent"), sessionDir, extension: EXTENSION_FILE, baseUrl: model.baseUrl, continueSession, env: { PHASEKIT_COUNTDOWN_MS: "600000" } });

/** The budget part of `phasekit show --json`, once `ready` accepts it (the history is written after the turn). */
async function shownBudget(cwd: string, id: string, ready: (b: { used: { turns: number } | null }) => boolean): Promise<{ used: { turns: number } | null; exhausted: string | null }> {
  const end = Date.now() + 20_000;
  for (;;) {
    const r = phasekit(["--repo", cwd, "--defs", path.join(cwd, ".pi", "workflows"), "--json", "show", id, "--fields", "budget"]);
    const b = (JSON.parse(r.stdout) as { budget: { used: { turns: number } | null; exhausted: string | null } }).budget;
    if (ready(b) || Date.now() > end) return b;
    await new Promise((res) => setTimeout(res, 100));
  }
}

describe.each(HOSTS)("pi $name (real CLI): budgets counted in the run's history", ({ get }) => {
  let host: PiHost;
  beforeAll(() => {
    host = get();
  }, 300_000);

  it("show gives a pi run's spent turns; a resume in another session goes on counting from them", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "phasekit-pi-budget-"));
    const cwd = path.join(root, "project");
    fs.mkdirSync(path.join(cwd, ".pi"), { recursive: true });
    fs.cpSync(GATE_EXAMPLES, path.join(cwd, ".pi", "workflows"), { recursive: true });
    const model = await startScriptedModel();
    model.fallback = { text: "Waiting for you." };
    let pi = start(host, root, cwd, model, path.join(root, "sessions-a"));
    try {
      model.push({ text: "Looked around." });
      pi.send({ type: "prompt", message: "/workflow budgeted Look around" });
      await model.waitForRequests(1);
      const id = fs.readdirSync(path.join(cwd, "ai_plan"))[0] as string;
      const first = await shownBudget(cwd, id, (b) => b.used !== null);
      expect(first.used).toMatchObject({ turns: 1, toolCalls: 0 });
      expect(first.exhausted).toBeNull();
      await pi.kill("SIGKILL");

      // Another session (its own session folder: no counts of this run in it) resumes the run by id.
      const sessionB = path.join(root, "sessions-b");
      pi = start(host, root, cwd, model, sessionB);
      model.push({ text: "Resumed." });
      pi.send({ type: "prompt", message: `/workflow-resume ${id}` });
      await model.waitForRequests(2);
      const notice = await pi.waitFor((l) => l["method"] === "notify" && String(l["message"]).includes("budget of 2 turns is used up"), 20_000, "the budget notice");
      expect(String(notice["message"])).toContain("the workflow Budgeted's budget of 2 turns is used up (2 used)");
      // The run's history is the one record of the counts: no session entry beside it.
      expect(readSession(sessionB).filter((e) => e["customType"] === "workflow:controls")).toEqual([]);
      const second = await shownBudget(cwd, id, (b) => (b.used?.turns ?? 0) >= 2);
      expect(second.used).toMatchObject({ turns: 2 });
    } finally {
      await pi.kill("SIGKILL");
      await model.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  }, 120_000);

  it("pi -c after another session raised the budget counts against the raise the run's history holds", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "phasekit-pi-budget-"));
    const cwd = path.join(root, "project");
    fs.mkdirSync(path.join(cwd, ".pi"), { recursive: true });
    fs.cpSync(GATE_EXAMPLES, path.join(cwd, ".pi", "workflows"), { recursive: true });
    const model = await startScriptedModel();
    model.fallback = { text: "Waiting for you." };
    const sessionA = path.join(root, "sessions-a");
    let pi = start(host, root, cwd, model, sessionA);
    try {
      model.push({ text: "Looked around." });
      pi.send({ type: "prompt", message: "/workflow budgeted Look around" });
      await model.waitForRequests(1);
      const id = fs.readdirSync(path.join(cwd, "ai_plan"))[0] as string;
      await shownBudget(cwd, id, (b) => b.used !== null);
      await pi.kill("SIGKILL");

      // Another session takes the run over and raises its turn budget to 5, and is killed before its turn ends
      // (the model holds the reply): the run's total stays 1 turn, only the raise is new.
      pi = start(host, root, cwd, model, path.join(root, "sessions-b"));
      model.push({ text: "Resumed.", hold: true });
      pi.send({ type: "prompt", message: `/workflow-resume ${id} turns=5` });
      await model.waitForRequests(2);
      expect(await waitBudget(path.join(cwd, "ai_plan", id), (r) => r.pi?.raised !== undefined)).toMatchObject({ turns: 1, pi: { raised: { workflow: { turns: 5 } } } });
      await pi.kill("SIGKILL");

      // Session a continued: its branch knows the declared 2 turns, the run's history the raise to 5.
      pi = start(host, root, cwd, model, sessionA, true);
      model.push({ tool: "bash", args: { command: "echo one" } }, { tool: "bash", args: { command: "echo two" } }, { tool: "bash", args: { command: "echo three" } }, { text: "done" });
      // 1 turn + 4: the raised budget runs out (before, the session's own entry judged it against 2 at its 2nd turn).
      pi.send({ type: "prompt", message: "Go on." });
      const notice = await pi.waitFor((l) => l["method"] === "notify" && String(l["message"]).includes(`run ${id} paused`), 30_000, "the pause notice");
      expect(String(notice["message"])).toContain("the workflow Budgeted's budget of 5 turns is used up (5 used)");
    } finally {
      await pi.kill("SIGKILL");
      await model.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  }, 120_000);
});
