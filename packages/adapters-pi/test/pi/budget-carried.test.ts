/**
 * Issue 21 in pi (typed fake host, real fs store): a run resumed in another session counts wall time from the
 * run's creation and the phase's start, not from the new session's start, and the budget entries of its history
 * keep pi's phase and progress counts beside the total; entries written before (the total only) read as before.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { endTurn, loadExtension, useTempProject, WITH_PLANS } from "./helpers/setup.js";
import { createFsPlanStore } from "../../src/store/plan-store.js";
import { loadBudgetTotal, saveBudgetTotal } from "../../src/pi/durable-budget.js";
import { recordBudgetTotal } from "../../src/run/budget.js";
import { budgetSpent } from "../../src/cli/budget-view.js";

const project = useTempProject();

function workflow(yamlBudget: string, phaseFrontMatter: string): void {
  const dir = path.join(project.workflows, "timed");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "workflow.yaml"), `name: "Timed"\n${yamlBudget}phases:\n  - work.md\n`);
  fs.writeFileSync(path.join(dir, "work.md"), `---\nid: work\nname: Work\n${phaseFrontMatter}---\nWork.\n`);
}

describe("pi: wall time of a run resumed in another session", () => {
  it.each([
    ["the workflow's", "budgets:\n  wallTimeMs: 60000\n", "", "the workflow Timed's budget of 60000"],
    ["the phase's", "", "budgets: { wallTimeMs: 60000 }\n", "the phase Work's budget of 60000"],
  ])("%s wall time counts from before the new session started", async (_name, yamlBudget, phaseFrontMatter, reason) => {
    workflow(yamlBudget, phaseFrontMatter);
    const a = loadExtension(project, WITH_PLANS);
    await a.pi.emit("session_start", {});
    await a.pi.command("workflow", "timed Take time");
    await endTurn(a.pi);
    await a.pi.emit("session_shutdown", {});
    const id = fs.readdirSync(path.join(project.cwd, "plans"))[0] as string;

    // A brand-new session a minute and a second later: only the run's history knows when it started.
    const b = loadExtension(project, WITH_PLANS);
    b.clock.now = a.clock.now + 61_000;
    await b.pi.emit("session_start", {});
    await b.pi.command("workflow-resume", id);
    await endTurn(b.pi);
    expect(b.pi.notices.map((n) => n.text).join("\n")).toContain(`${reason} ms`);
    await b.pi.emit("session_shutdown", {});
  });
});

describe("pi: a raised budget of a run resumed in another session", () => {
  it("holds there: the run is judged against the raised limit, not the declared one", async () => {
    workflow("budgets:\n  turns: 2\n", "");
    const a = loadExtension(project, WITH_PLANS);
    await a.pi.emit("session_start", {});
    await a.pi.command("workflow", "timed Count");
    await endTurn(a.pi);
    await endTurn(a.pi);
    const id = fs.readdirSync(path.join(project.cwd, "plans"))[0] as string;
    expect(a.pi.notices.at(-1)?.text).toContain(`run ${id} paused: the workflow Timed's budget of 2 turns is used up`);
    await a.pi.command("workflow-resume", `${id} turns=5`);
    await endTurn(a.pi);
    await a.pi.emit("session_shutdown", {});

    const b = loadExtension(project, WITH_PLANS);
    await b.pi.emit("session_start", {});
    await b.pi.command("workflow-resume", id);
    const before = b.pi.notices.length;
    await endTurn(b.pi);
    expect(b.pi.notices.slice(before).map((n) => n.text).join("\n")).not.toContain("paused");
    await endTurn(b.pi);
    expect(b.pi.notices.at(-1)?.text).toContain(`run ${id} paused: the workflow Timed's budget of 5 turns is used up (5 used)`);
    await b.pi.emit("session_shutdown", {});
  });
});

describe("pi: pi -c on a session whose run went on in another session", () => {
  it("goes on from the newer counts of the run's history, not from its own older entry", async () => {
    workflow("budgets:\n  turns: 10\n", "");
    const a = loadExtension(project, WITH_PLANS);
    await a.pi.emit("session_start", {});
    await a.pi.command("workflow", "timed Count");
    await endTurn(a.pi);
    await a.pi.emit("session_shutdown", {});
    const id = fs.readdirSync(path.join(project.cwd, "plans"))[0] as string;
    const b = loadExtension(project, WITH_PLANS);
    await b.pi.emit("session_start", {});
    await b.pi.command("workflow-resume", id);
    await endTurn(b.pi);
    await endTurn(b.pi);
    await b.pi.emit("session_shutdown", {});

    // Session a again, continued (its branch, whose last counts say 1 turn).
    const again = loadExtension(project, { ...WITH_PLANS, branch: [...a.pi.branch] });
    await again.pi.emit("session_start", {});
    await again.pi.command("workflow-resume", id);
    await endTurn(again.pi);
    await again.pi.emit("session_shutdown", {});
    // The run's history is the one record (no session entry beside it).
    expect((await budgetSpent(await createFsPlanStore({ repoRoot: project.cwd, planRoot: "plans" }).runDir(id)))?.used.turns).toBe(4);
    expect(again.pi.branch.filter((e) => e.customType === "workflow:controls")).toEqual([]);
  });
});

describe("pi: the budget entries of a run's history", () => {
  it("keep pi's counts beside the total; an entry with the total only reads as before", async () => {
    const store = createFsPlanStore({ repoRoot: project.cwd, planRoot: "plans" });
    const lock = await store.lock("run00001", { owner: { tool: "pi" } });
    if (!lock.ok) throw new Error(lock.error.message);
    const held = lock.lock.store ?? store;
    const now = 1_700_000_000_000;
    await recordBudgetTotal(await held.checkpoints("run00001", { now: () => new Date(now) }), 1, { turns: 3 }, { turns: 3, toolCalls: 0, tokens: 0, cost: 0 });
    const old = await loadBudgetTotal(held, "run00001", now);
    expect(old).toMatchObject({ n: 1, total: { turns: 3 }, extra: {}, pi: undefined });

    const counts = { phaseKey: '["run00001",[],0]', phaseUsed: { turns: 1, toolCalls: 2, tokens: 0, cost: 0 }, phaseStartedAt: now - 5000, same: { tool: "read", args: '{"path":"a"}', count: 2 }, idleTurns: 1 };
    const saved = await saveBudgetTotal(held, "run00001", old, { turns: 4, toolCalls: 2, tokens: 0, cost: 0, wallTimeMs: 9 }, now, counts);
    expect(saved).toMatchObject({ n: 2, pi: counts });
    // Only the counts changed: still a new entry (a phase change or a pause reason is kept too).
    const again = await saveBudgetTotal(held, "run00001", saved, { turns: 4, toolCalls: 2, tokens: 0, cost: 0, wallTimeMs: 9 }, now, { ...counts, idleTurns: 0, same: undefined });
    expect(again?.n).toBe(3);
    expect(await saveBudgetTotal(held, "run00001", again, { turns: 4, toolCalls: 2, tokens: 0, cost: 0, wallTimeMs: 10 }, now, { ...counts, idleTurns: 0, same: undefined })).toBe(again);
    expect(await loadBudgetTotal(held, "run00001", now)).toMatchObject({ n: 3, total: { turns: 4, toolCalls: 2 }, pi: { idleTurns: 0, phaseUsed: { toolCalls: 2 } } });
    // phasekit show reads the total as before.
    expect((await budgetSpent(await store.runDir("run00001")))?.used).toEqual({ turns: 4, toolCalls: 2, tokens: 0, cost: 0 });
    await lock.lock.release();
    await store.close();
  });
});
