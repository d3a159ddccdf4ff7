/**
 * A pi run ends as a runWorkflow run does: the rerun marks of the steps it did not reach are spent, so retention
 * and the views stop calling it pending a rerun. The run is marked (as `phasekit rerun` did before it refused
 * phasekit's own entries, all a pi run's history holds) while no session holds it, resumed in another session,
 * and ended there by each of pi's ends: completed through workflow_step, cancelled by /cancel-workflow, failed by
 * its exhausted budget, cancelled by a new run replacing it. Before, every one kept its marks pending: `phasekit gc` kept the ended run for ever (`rerun-pending`).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { endTurn, loadExtension, useTempProject, WITH_PLANS } from "./helpers/setup.js";
import { resultText, type FakePi } from "./helpers/fake-pi.js";
import { createFsPlanStore } from "../../src/store/plan-store.js";
import { readRunLog } from "../../src/store/run-log/reader.js";
import { gc } from "../../src/store/retention.js";
import { rerunFrom } from "../../src/run/rerun-from.js";
import { writeLegacyMark } from "../helpers/legacy-rerun-mark.js";

const project = useTempProject();
const ID = "run00001";
const status = () => (JSON.parse(fs.readFileSync(path.join(project.cwd, "plans", ID, "workflow.json"), "utf8")) as { status: string }).status;

/** One phase, a turn budget of 4 that fails the run when used up. */
function workflow(): void {
  const dir = path.join(project.workflows, "budgeted");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "workflow.yaml"), `name: "Budgeted"\nbudgets:\n  turns: 4\n  onExhausted: fail\nphases:\n  - work.md\n`);
  fs.writeFileSync(path.join(dir, "work.md"), "---\nid: work\nname: Work\n---\nWork.\n");
}

/** The run's history as `phasekit show` reads it: each key with its rerun flags. */
async function flags(): Promise<string[]> {
  const view = await readRunLog(path.join(project.cwd, "plans", ID));
  if (view === null) throw new Error("no run log");
  try {
    return view.entries().map((e) => `${e.key}:${e.superseded === true ? (e.rerunSpent === true ? "spent" : "pending") : "-"}`);
  } finally {
    view.close();
  }
}

const ENDS: Array<[string, (pi: FakePi) => Promise<void>, string]> = [
  ["completed through workflow_step", async (pi) => void expect(resultText(await pi.step({ action: "next" }))).toContain("complete"), "completed"],
  ["cancelled by /cancel-workflow", (pi) => pi.command("cancel-workflow"), "cancelled"],
  [
    "failed by its exhausted budget",
    async (pi) => {
      // The mark took the first session's two turns out of the run's total (the total is its current history's,
      // run/budget.ts latestBudgetEntry): this session counts the budget of 4 from zero.
      for (let i = 0; i < 4; i++) await endTurn(pi);
    },
    "failed",
  ],
  [
    "cancelled by a new run replacing it",
    async (pi) => {
      pi.confirmAnswers.push(true);
      await pi.command("workflow", "budgeted Another");
    },
    "cancelled",
  ],
];

describe("pi: a marked run's end spends its rerun marks", () => {
  it.each(ENDS)("%s", async (_name, end, ended) => {
    workflow();
    const a = loadExtension(project, WITH_PLANS);
    await a.pi.emit("session_start", {});
    await a.pi.command("workflow", "budgeted Count");
    await endTurn(a.pi);
    await endTurn(a.pi);
    await a.pi.emit("session_shutdown", {});

    // Nobody holds the run. Its history holds phasekit's own entries only, which `phasekit rerun` refuses now; a
    // mark an earlier version wrote over them (every key from the first one) is still pending on disk.
    const keys = (await flags()).map((f) => f.split(":").slice(0, -1).join(":"));
    const store = createFsPlanStore({ repoRoot: project.cwd, planRoot: "plans" });
    await expect(rerunFrom({ store, target: ID, from: keys[0] ?? "", reason: "test" })).rejects.toMatchObject({ code: "INVALID_OPTIONS" });
    await store.close();
    await writeLegacyMark(path.join(project.cwd, "plans", ID), keys);
    const marked = { keys };
    expect(marked.keys.length).toBeGreaterThan(1);
    expect(await flags()).toEqual(marked.keys.map((k) => `${k}:pending`));

    const b = loadExtension(project, { options: { ...WITH_PLANS.options, newTaskId: async () => "run00002" } });
    await b.pi.emit("session_start", {});
    await b.pi.command("workflow-resume", ID);
    await end(b.pi);
    expect(status()).toBe(ended);
    await b.pi.emit("agent_end", { messages: [] } as never);
    await b.pi.emit("session_shutdown", {});

    // The marked entries were never reached again: their marks are spent, and gc removes the run as any ended one.
    // A budget entry this session counted again is recorded anew instead: no longer superseded.
    const after = await flags();
    for (const k of marked.keys) expect(after).toContain(ended === "failed" && k.startsWith("phasekit:budget#") ? `${k}:-` : `${k}:spent`);
    expect(after.filter((f) => f.endsWith(":pending"))).toEqual([]);
    const report = await gc({ planRoot: path.join(project.cwd, "plans"), keep: 0, now: () => new Date(Date.now() + 86_400_000) });
    expect(report.kept.filter((k) => k.slug === ID)).toEqual([]);
    expect(report.removed).toMatchObject([{ slug: ID, reason: "beyond-keep" }]);
  });
});
