/**
 * What a pi run has spent has one record: the run's history (its `phasekit:budget#n` entries). A session whose
 * run has a plan folder writes no `workflow:controls` entry, and a session continued after the run went on
 * elsewhere counts from the history, whatever its own branch says. Sessions of older versions (their
 * `workflow:controls` entries) are still read when the history holds no count yet; a run without a plan folder
 * keeps its counts in the session (it has no history). Typed fake host, real fs store in a temp folder.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { endTurn, loadExtension, useTempProject, WITH_PLANS } from "./helpers/setup.js";
import type { BranchEntry, WorkflowExtensionOptions } from "../../src/pi/index.js";
import { budgetSpent } from "../../src/cli/budget-view.js";
import { createFsPlanStore, type PlanStore } from "../../src/store/plan-store.js";
import { saveBudgetTotal } from "../../src/pi/durable-budget.js";
import { latestBudgetRecord } from "./helpers/budget-record.js";

const project = useTempProject();
const controls = (branch: readonly BranchEntry[]) => branch.filter((e) => e.type === "custom" && e.customType === "workflow:controls");

function workflow(turns: number): void {
  const dir = path.join(project.workflows, "counted");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "workflow.yaml"), `name: "Counted"\nbudgets:\n  turns: ${turns}\nphases:\n  - work.md\n`);
  fs.writeFileSync(path.join(dir, "work.md"), "---\nid: work\nname: Work\n---\nWork.\n");
}

/** A session that starts Counted (a budget of `limit` turns), spends `turns` turns and shuts down. */
async function countedSession(limit: number, turns: number, opts: { options?: WorkflowExtensionOptions } = WITH_PLANS) {
  workflow(limit);
  const { pi } = loadExtension(project, opts);
  await pi.emit("session_start", {});
  await pi.command("workflow", "counted Count");
  for (let i = 0; i < turns; i++) await endTurn(pi);
  await pi.emit("session_shutdown", {});
  return pi;
}

const runId = () => fs.readdirSync(path.join(project.cwd, "plans"))[0] as string;
const spentTurns = async (id: string) => (await budgetSpent(await createFsPlanStore({ repoRoot: project.cwd, planRoot: "plans" }).runDir(id)))?.used.turns;

describe("pi: one record of a run's spend", () => {
  it("a session whose run has a plan folder keeps the counts in the run's history only", async () => {
    const a = await countedSession(10, 2);
    expect(await spentTurns(runId())).toBe(2);
    expect(controls(a.branch)).toEqual([]);
  });

  it("a raise made in another session holds when this session is continued (pi -c)", async () => {
    const a = await countedSession(2, 1);
    const id = runId();

    // Another session takes the run over and raises its turn budget to 5, spending nothing.
    const b = loadExtension(project, WITH_PLANS);
    await b.pi.emit("session_start", {});
    await b.pi.command("workflow-resume", `${id} turns=5`);
    await b.pi.emit("session_shutdown", {});

    // Session a again (its branch: 1 turn, the declared limit of 2): the history says 1 turn, limit 5.
    const again = loadExtension(project, { ...WITH_PLANS, branch: [...a.branch] });
    await again.pi.emit("session_start", {});
    await endTurn(again.pi);
    await endTurn(again.pi);
    expect(again.pi.notices.map((n) => n.text).join("\n")).not.toContain("paused");
    await endTurn(again.pi);
    await endTurn(again.pi);
    expect(again.pi.notices.at(-1)?.text).toContain(`run ${id} paused: the workflow Counted's budget of 5 turns is used up (5 used)`);
    await again.pi.emit("session_shutdown", {});
    expect(await spentTurns(id)).toBe(5);
  });

  it("an older version's session entry ahead of the history (a crash between its two writes) does not count: the history does", async () => {
    const a = await countedSession(3, 1);
    const id = runId();
    // What an older version left: its session entry said 2 turns, its history write of them never happened.
    const branch = [...a.branch, { type: "custom", customType: "workflow:controls", data: { taskId: id, phaseKey: "x", workflowUsed: { turns: 2, toolCalls: 0, tokens: 0, cost: 0, wallTimeMs: 0 }, phaseUsed: { turns: 2, toolCalls: 0, tokens: 0, cost: 0, wallTimeMs: 0 }, workflowStartedAt: 0, phaseStartedAt: 0, same: undefined, idleTurns: 0, pausedFor: undefined } }] as BranchEntry[];

    // The continued session and a new one see the same spend: 1 turn, then 2 (one more), not 3.
    const again = loadExtension(project, { ...WITH_PLANS, branch });
    await again.pi.emit("session_start", {});
    await endTurn(again.pi);
    expect(again.pi.notices.map((n) => n.text).join("\n")).not.toContain("paused");
    await again.pi.emit("session_shutdown", {});
    expect(await spentTurns(id)).toBe(2);
  });

  it("an older version's session entry is read when the run's history holds no count yet, and the history goes on from it", async () => {
    // Counted without a plan folder (as before the history held the counts): the session is the record.
    const a = await countedSession(3, 2, {});
    expect(controls(a.branch).at(-1)?.data).toMatchObject({ workflowUsed: { turns: 2 } });

    const again = loadExtension(project, { ...WITH_PLANS, branch: [...a.branch] });
    await again.pi.emit("session_start", {});
    await endTurn(again.pi);
    expect(again.pi.notices.at(-1)?.text).toContain("the workflow Counted's budget of 3 turns is used up (3 used)");
    await again.pi.emit("session_shutdown", {});
    expect(await spentTurns(runId())).toBe(3);
    expect(controls(again.pi.branch)).toHaveLength(controls(a.branch).length);
  });

  it("a save whose entry number is taken already (the latest could not be read back) records the next one, not nothing", async () => {
    const store = createFsPlanStore({ repoRoot: project.cwd, planRoot: "plans" });
    const lock = await store.lock("run00001", { owner: { tool: "pi" } });
    if (!lock.ok) throw new Error(lock.error.message);
    // A store that cannot read outputs back (readStepOutput is optional in the port): every session starts at none.
    const held: PlanStore = { ...(lock.lock.store ?? store), readStepOutput: undefined };
    const now = 1_700_000_000_000;
    const zero = { turns: 0, toolCalls: 0, tokens: 0, cost: 0, wallTimeMs: 0 };
    const counts = (turns: number) => ({ phaseKey: "k", phaseUsed: { turns: 0, toolCalls: 0, tokens: 0, cost: 0 }, phaseStartedAt: now, idleTurns: 0, raised: { workflow: { turns } } });
    expect(await saveBudgetTotal(held, "run00001", null, zero, now, counts(5))).toMatchObject({ n: 1 });
    // A raise (nothing spent) saved again from no known entry: #1 is there with the same spend.
    const second = await saveBudgetTotal(held, "run00001", null, zero, now, counts(7));
    expect(second).toMatchObject({ n: 2, pi: { raised: { workflow: { turns: 7 } } } });
    expect((await latestBudgetRecord(await store.runDir("run00001")))?.pi?.raised).toEqual({ workflow: { turns: 7 } });
    await lock.lock.release();
    await store.close();
  });
});
