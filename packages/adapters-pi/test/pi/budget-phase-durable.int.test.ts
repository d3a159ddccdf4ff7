/**
 * Issue 21 with the real CLI of both pi hosts and a scripted model: what pi counts for the current phase (its
 * budget) and for progress (idle turns) is kept in the run's history beside the run's totals, so a run resumed in
 * another session after pi was SIGKILLed goes on counting from them. Before, both started again from zero in the
 * new session: a phase budget of 2 turns or an idle-turns threshold of 2 was never reached across the two.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { readSession, startPi, type PiHost, type PiProcess } from "../../../../examples/pi/pi-process.js";
import { startScriptedModel, type ScriptedModel } from "../../../../examples/pi/scripted-model.js";
import { EXTENSION_FILE, HOSTS } from "./hosts.js";
import { waitBudget } from "./helpers/budget-record.js";

const start = (host: PiHost, root: string, cwd: string, model: ScriptedModel, sessionDir: string): PiProcess =>
  startPi({ host, cwd, agentDir: path.join(root, "home", ".pi", "agent"), sessionDir, extension: EXTENSION_FILE, baseUrl: model.baseUrl, env: { PHASEKIT_COUNTDOWN_MS: "600000" } });

/** One workflow of one phase with `frontMatter` (budgets, progress) in the phase file. */
function project(root: string, frontMatter: string): string {
  const cwd = path.join(root, "project");
  const dir = path.join(cwd, ".pi", "workflows", "slow");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "workflow.yaml"), 'name: "Slow"\nphases:\n  - work.md\n');
  fs.writeFileSync(path.join(dir, "work.md"), `---\nid: work\nname: Work\n${frontMatter}---\nDo the task, then call workflow_step with action='next'.\n`);
  return cwd;
}

/** Waits until run `id`'s history holds a budget entry with pi's counts (idle turns 1), or 20 s passed. */
async function waitCounted(cwd: string, id: string): Promise<void> {
  const end = Date.now() + 20_000;
  const dir = path.join(cwd, "ai_plan", id);
  const has = (): boolean => {
    try {
      return fs.readdirSync(dir, { recursive: true }).some((f) => fs.statSync(path.join(dir, String(f))).isFile() && fs.readFileSync(path.join(dir, String(f)), "utf8").includes('"idleTurns":1'));
    } catch {
      return false;
    }
  };
  while (!has() && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
}

describe.each(HOSTS)("pi $name (real CLI): phase and progress counts kept in the run's history", ({ get }) => {
  let host: PiHost;
  beforeAll(() => {
    host = get();
  }, 300_000);

  async function acrossKill(frontMatter: string, expected: string): Promise<void> {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "phasekit-pi-phase-budget-"));
    const cwd = project(root, frontMatter);
    const model = await startScriptedModel();
    model.fallback = { text: "Waiting for you." };
    let pi = start(host, root, cwd, model, path.join(root, "sessions-a"));
    try {
      model.push({ text: "Looked around." });
      pi.send({ type: "prompt", message: "/workflow slow Look around" });
      await model.waitForRequests(1);
      const id = fs.readdirSync(path.join(cwd, "ai_plan"))[0] as string;
      await waitCounted(cwd, id);
      await pi.kill("SIGKILL");

      // Another session (no counts of this run in its own session folder) resumes the run by id.
      const sessionB = path.join(root, "sessions-b");
      pi = start(host, root, cwd, model, sessionB);
      model.push({ text: "Resumed." });
      pi.send({ type: "prompt", message: `/workflow-resume ${id}` });
      await model.waitForRequests(2);
      const notice = await pi.waitFor((l) => l["method"] === "notify" && String(l["message"]).includes(`run ${id} paused`), 20_000, "the pause notice");
      expect(String(notice["message"])).toContain(expected);
      // The run's history holds the counts (the session no entry of its own beside them).
      const counts = await waitBudget(path.join(cwd, "ai_plan", id), (r) => r.turns >= 2);
      expect(counts).toMatchObject({ turns: 2, pi: { phaseUsed: { turns: 2 } } });
      expect(readSession(sessionB).filter((e) => e["customType"] === "workflow:controls")).toEqual([]);
    } finally {
      await pi.kill("SIGKILL");
      await model.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  }

  it("a phase budget of 2 turns runs out on the first turn of the new session", async () => {
    await acrossKill("budgets: { turns: 2 }\n", "the phase Work's budget of 2 turns is used up (2 used)");
  }, 120_000);

  it("an idle-turns threshold of 2 is reached on the first turn of the new session", async () => {
    await acrossKill("progress: { idleTurns: 2 }\n", "no progress: 2 turns in a row changed no file and completed no step");
  }, 120_000);
});
