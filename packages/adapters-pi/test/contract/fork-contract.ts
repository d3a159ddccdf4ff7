/**
 * A fork through the store, as every backend must make it (part of the history contract, run on fs, memory and
 * PostgreSQL): it copies the source's history before its step, phasekit's own entries included (the workflow's
 * start, each dispatch, each budget spend), so the fork starts from the workflow state and budget total the source
 * had there, and its resumed body replays those dispatches and spends by occurrence rather than making them again.
 */
import { expect, it } from "vitest";
import { createReporter, forkRun, runWorkflow, type PlanStore, type RunContext } from "@phasekit/adapters-pi";
import { releaseRegistry } from "../../../../examples/release-workflow.js";
import { latestBudgetTotal } from "../../src/run/budget.js";
import { loadBudgetTotal } from "../../src/pi/durable-budget.js";
import { storeStepRecords } from "../../src/cli/store-runs.js";

/** Each step of the body, then the dispatch and the spend that follow it. */
const PLAN = [
  ["build", "advance"],
  ["static", "advance"],
  ["threat", "advance"],
  ["deps", "loop"],
  ["threat-again", "advance"],
  ["deps-again", "advance"],
  ["publish", "advance"],
] as const;

/** A clock of its own per run, a second a tick: a dispatch made again (not replayed) stamps another time. */
const clockFrom = (start: string) => {
  let t = Date.parse(start);
  return () => new Date((t += 1_000));
};

/** The cases, inside the history contract's describe; `open` returns an empty store, `repoRoot` a fresh folder. */
export function forkContractCases(open: () => Promise<PlanStore>, repoRoot: () => string): void {
  it("a fork copies phasekit's own entries before its step: resumed, it sees the source's workflow state and budget total there and reuses its steps", async () => {
    const store = await open();
    try {
      const root = repoRoot();
      const effects: string[] = [];
      // What the body saw before each step: the workflow state and what it had spent.
      const body = async (ctx: RunContext) => {
        const wf = ctx.workflow;
        if (wf === null) throw new Error("the run carries no workflow");
        const seen: unknown[] = [];
        for (const [i, [step, event]] of PLAN.entries()) {
          const { turns, tokens } = ctx.budget.used();
          seen.push({ step, state: JSON.parse(JSON.stringify(wf.state())) as unknown, turns, tokens });
          await ctx.step(step, { step }, () => {
            effects.push(step);
            return `${step} done`;
          });
          expect(await wf.dispatch({ type: event })).toMatchObject({ ok: true });
          await ctx.budget.spend({ turns: 1, tokens: 10 * (i + 1) });
        }
        const { turns, tokens } = ctx.budget.used();
        return { seen, spent: { turns, tokens }, steps: ctx.steps.map((s) => `${s.stepId}:${s.outcome}`) };
      };
      const enter = (slug: string, clock: () => Date) =>
        runWorkflow(
          { repoRoot: root, target: slug, toolName: "history-contract", store, clock, workflow: { registry: releaseRegistry(), workflowKey: "release", taskDescription: "ship" }, createReporter: () => createReporter({ onChange: () => undefined }) },
          body,
        );
      const source = await enter("source", clockFrom("2026-01-01T00:00:00Z"));
      if (source.status !== "completed") throw new Error(`the source ended ${source.status}`);
      const atFork = source.result.seen[2] as { state: unknown; turns: number; tokens: number };
      // Read without a lease (as the fork reads its source): the whole history; the view for people, the body's steps.
      expect((await latestBudgetTotal(store, "source", () => new Date()))?.total).toMatchObject(source.result.spent);
      expect((await storeStepRecords(store, "source")).map((r) => r.stepId)).toEqual(PLAN.map(([step]) => step));

      const later = clockFrom("2026-06-01T00:00:00Z");
      const fork = await forkRun({ store, target: "source", at: "threat", id: "forked", now: later });
      expect(fork.copied).toEqual(["phasekit:pi-definitions", "phasekit:workflow", "build", "phasekit:dispatch#1", "phasekit:budget#1", "static", "phasekit:dispatch#2", "phasekit:budget#2"]);
      // Before it runs, the fork is where the source was: its workflow state, its budget total (every reader's).
      const meta = await store.readMetadata("forked");
      expect(meta.ok && meta.metadata?.state).toEqual(atFork.state);
      const lock = await store.lock("forked", { owner: { tool: "reader" } });
      if (!lock.ok) throw lock.error;
      try {
        const held = lock.lock.store ?? store;
        const total = { turns: atFork.turns, toolCalls: 0, tokens: atFork.tokens, cost: 0 };
        expect((await latestBudgetTotal(held, "forked", () => new Date()))?.total).toEqual(total);
        expect((await loadBudgetTotal(held, "forked", Date.now()))?.total).toEqual(total);
      } finally {
        await lock.lock.release();
      }

      // Resumed later, it replays the source's dispatches and spends (their times, their totals) up to the fork
      // point, reuses the steps before it and runs the rest.
      effects.length = 0;
      const resumed = await enter("forked", later);
      if (resumed.status !== "completed") throw new Error(`the fork ended ${resumed.status}`);
      expect(resumed.result.seen.slice(0, 3)).toEqual(source.result.seen.slice(0, 3));
      expect(resumed.result.steps).toEqual(["build:reused", "static:reused", ...PLAN.slice(2).map(([step]) => `${step}:ran`)]);
      expect(effects).toEqual(PLAN.slice(2).map(([step]) => step));
      expect(resumed.result.spent).toEqual(source.result.spent);
      expect(resumed.metadata).toMatchObject({ status: "completed", state: { status: "completed" } });
    } finally {
      await store.close();
    }
  });
}
