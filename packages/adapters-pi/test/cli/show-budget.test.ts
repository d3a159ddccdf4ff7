/**
 * Issue 21: budgets in `phasekit show` (text and JSON) and the inspector's run page: what `ctx.budget` spent
 * (from the run's history) against the limits the run's definitions declare, with core's "used up" reason.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createReporter, forkRun, rerunFrom, runWorkflow, type RunContext } from "@phasekit/adapters-pi";
import { loadDefinitionFolders } from "../../src/definitions/folders.js";
import { runPage } from "../../src/cli/inspector-api.js";
import { useTempRepos } from "../helpers/temp-repos.js";
import { phasekit } from "./helpers/run-cli.js";

const repo = useTempRepos("pk-show-budget-");
const GATES = path.resolve(import.meta.dirname, "..", "..", "..", "..", "examples", "gates", "workflows");

describe("budgets in show and the inspector", () => {
  it("shows what ctx.budget spent against the workflow's declared limits, and when one is used up", async () => {
    const root = repo();
    const { registry } = loadDefinitionFolders([GATES]);
    const run = await runWorkflow({ repoRoot: root, target: "b1", toolName: "t", workflow: { registry, workflowKey: "budgeted", taskDescription: "count" } }, async (ctx) => {
      await ctx.budget.spend({ turns: 1, tokens: 500, cost: 0.01 });
      await ctx.budget.spend({ turns: 1, tokens: 250 });
      return "spent";
    });
    expect(run.status).toBe("paused"); // the budget of 2 turns is used up at the second spend
    const json = phasekit(["--repo", root, "--defs", GATES, "--json", "show", "b1", "--fields", "budget"]);
    expect(json.code, json.stderr).toBe(0);
    const doc = JSON.parse(json.stdout) as { budget: Record<string, unknown> };
    expect(doc.budget).toMatchObject({ used: { turns: 2, tokens: 750, cost: 0.01, toolCalls: 0 }, limits: { workflow: { turns: 2, onExhausted: "pause" }, phase: null }, left: { turns: 0 } });
    expect(doc.budget["exhausted"]).toBe("the workflow Budgeted's budget of 2 turns is used up (2 used)");
    const text = phasekit(["--repo", root, "--defs", GATES, "show", "b1"]);
    expect(text.stdout).toMatch(/ {2}budget {3}used 2 turns, 0 tool calls, 750 tokens, cost 0\.01; workflow limits 2 turns; left 0 turns; the workflow Budgeted's budget of 2 turns is used up \(2 used\)/);
    const page = (await runPage({ roots: { repoRoot: root }, defDirs: [GATES], now: () => new Date() } as never, "b1")) as { budget: { text: string } };
    expect(page.budget.text).toContain("used 2 turns");
  });

  it("after a rerun whose body spends fewer times, shows the rerun's total, not the first run's", async () => {
    const root = repo();
    const body = (spends: number) => async (ctx: RunContext) => {
      for (let i = 1; i <= spends; i++) {
        await ctx.step(`s${i}`, { i }, () => i);
        await ctx.budget.spend({ turns: 1, tokens: 10 * i });
      }
    };
    const enter = (spends: number) => runWorkflow({ repoRoot: root, target: "b3", toolName: "t", reenter: true, createReporter: () => createReporter({ onChange: () => undefined }) }, body(spends));
    const used = async () => {
      type Used = { budget: { used: { wallTimeMs?: number } | null } | null };
      const doc = JSON.parse(phasekit(["--repo", root, "--json", "show", "b3", "--fields", "budget"]).stdout) as Used;
      const page = (await runPage({ roots: { repoRoot: root }, defDirs: [], now: () => new Date() } as never, "b3")) as Used;
      // The inspector reads the same total (wall time is measured at each read).
      expect({ ...page.budget?.used, wallTimeMs: 0 }).toEqual({ ...doc.budget?.used, wallTimeMs: 0 });
      return doc.budget?.used;
    };
    expect(await enter(5)).toMatchObject({ status: "completed" });
    expect(await used()).toMatchObject({ turns: 5, tokens: 150 });
    await rerunFrom({ repoRoot: root, target: "b3", from: "s2" });
    expect(await enter(2)).toMatchObject({ status: "completed" });
    expect(await used()).toMatchObject({ turns: 2, tokens: 30 });
    expect(phasekit(["--repo", root, "show", "b3"]).stdout).toMatch(/ {2}budget {3}used 2 turns, 0 tool calls, 30 tokens, cost 0\n/);
    // A fork at s5 holds the current history before it: not the first run's spends after s2.
    const fork = await forkRun({ repoRoot: root, target: "b3", at: "s5", id: "b3-fork" });
    expect(fork.copied.filter((k) => k.startsWith("phasekit:budget#"))).toEqual(["phasekit:budget#1", "phasekit:budget#2"]);
    const forked = JSON.parse(phasekit(["--repo", root, "--json", "show", "b3-fork", "--fields", "budget"]).stdout) as { budget: { used: unknown } | null };
    expect(forked.budget?.used).toMatchObject({ turns: 2, tokens: 30 });
  });

  it("a run with no budget and no spend shows none", async () => {
    const root = repo();
    await runWorkflow({ repoRoot: root, target: "b2", toolName: "t" }, async (ctx) => ctx.step("s", {}, () => "v"));
    const json = JSON.parse(phasekit(["--repo", root, "--json", "show", "b2"]).stdout) as { budget: unknown };
    expect(json.budget).toBeNull();
    expect(phasekit(["--repo", root, "show", "b2"]).stdout).not.toMatch(/^ {2}budget /m);
  });
});
