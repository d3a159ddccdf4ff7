/**
 * `phasekit rerun --from` and phasekit's own history entries (`phasekit:`-keys, which `phasekit show` hides).
 * A rerun starts at a step of the body: a reserved `from` is refused (INVALID_OPTIONS naming it, the hint naming
 * the body's steps), and writes no mark. A mark from a real step never names phasekit's bookkeeping entries (the
 * workflow's start, the pinned definitions): the start is where the replay begins, and the pin must keep the
 * definitions the run took. A durable wait after `from` stays named (the rerun's new work waits, and is approved,
 * again), and so does a dispatch (made again, it writes the state the rerun's body reaches;
 * time-travel.workflow.test.ts) and a budget spend (made again, it records the total the rerun's body reaches; one
 * it no longer makes stays superseded, out of the run's total: contract/budget-rerun-contract.ts).
 */
import { existsSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createFsPlanStore, createReporter, forkRun, rerunFrom, runWorkflow, type RunContext } from "../src/index.js";
import { keysFrom } from "../src/engine/reuse-decision.js";
import { readRunLog } from "../src/store/run-log/reader.js";
import { phasekitInProcess } from "./cli/helpers/run-cli.js";
import { useTempRepos } from "./helpers/temp-repos.js";

const repo = useTempRepos("pk-rerun-reserved-");

/** a, budget#1, b, budget#2, c: a body that reports a turn after each of its first two steps. */
function run(root: string, effects: string[]) {
  return runWorkflow(
    { repoRoot: root, target: "r", toolName: "t", budgets: { turns: 100 }, createReporter: () => createReporter({ onChange: () => undefined }) },
    async (ctx: RunContext) => {
      for (const id of ["a", "b", "c"]) {
        await ctx.step(id, { id }, () => {
          effects.push(id);
          return id;
        });
        if (id !== "c") await ctx.budget.spend({ turns: 1 });
      }
      return ctx.budget.used().turns;
    },
  );
}

async function history(root: string): Promise<Array<{ key: string; superseded: boolean }>> {
  const view = await readRunLog(path.join(root, "ai_plan", "r"));
  if (view === null) throw new Error("no run log");
  try {
    return view.entries().map((e) => ({ key: e.key, superseded: e.superseded === true }));
  } finally {
    view.close();
  }
}

const BOOKKEEPING = ["phasekit:workflow", "phasekit:pi-definitions"];
const RERUN_WITH_STEPS = ["phasekit:approval-start:ship#1", "phasekit:approval:ship#1", "phasekit:sleep#1", "phasekit:sleep-due#1", "phasekit:dispatch#2", "phasekit:budget#1", "phasekit:budget#2"];

describe("rerun from phasekit's own history entries", () => {
  it("keysFrom names from, and after it the body's steps, durable waits, dispatches and budget spends, never a bookkeeping entry", () => {
    const key = fc.constantFrom("a", "b", "c", "d", ...BOOKKEEPING, ...RERUN_WITH_STEPS);
    fc.assert(
      fc.property(fc.uniqueArray(key, { maxLength: 10 }), key, (order, from) => {
        const r = keysFrom(order, from);
        if (!order.includes(from)) return void expect(r).toBeNull();
        const later = order.slice(order.indexOf(from) + 1);
        expect(r).toEqual([from, ...later.filter((k) => !BOOKKEEPING.includes(k))]);
      }),
    );
  });

  it.each(["phasekit:budget#1", "phasekit:budget#2"])("rerunFrom refuses %s: INVALID_OPTIONS naming it and the body's steps, no mark written", async (from) => {
    const root = repo();
    await run(root, []);
    const before = await history(root);
    expect(before.map((e) => e.key)).toContain(from);
    const err = await rerunFrom({ repoRoot: root, target: "r", from }).then(() => undefined, (e: unknown) => e);
    expect(err).toMatchObject({ code: "INVALID_OPTIONS", details: { field: "from", value: from } });
    expect((err as Error).message).toContain(`"${from}"`);
    expect((err as { details: { hint: string } }).details.hint).toContain("a, b, c");
    expect((err as { details: { hint: string } }).details.hint).not.toContain("phasekit:");
    expect(await history(root)).toEqual(before);
    // The lock was let go: a rerun from a step of the body is taken at once.
    await expect(rerunFrom({ repoRoot: root, target: "r", from: "c" })).resolves.toMatchObject({ keys: ["c"] });
  });

  it.each(["plan folder", "store"] as const)("forkRun (%s) refuses a reserved at as rerunFrom does: INVALID_OPTIONS naming it and the body's steps, no fork made", async (where) => {
    const root = repo();
    await run(root, []);
    const before = await history(root);
    const store = where === "store" ? createFsPlanStore({ repoRoot: root }) : undefined;
    try {
      const from = where === "store" ? { store: store as NonNullable<typeof store> } : { repoRoot: root };
      const err = await forkRun({ ...from, target: "r", at: "phasekit:budget#1", id: "f" }).then(() => undefined, (e: unknown) => e);
      expect(err).toMatchObject({ code: "INVALID_OPTIONS", details: { field: "at", value: "phasekit:budget#1" } });
      expect((err as Error).message).toContain('"phasekit:budget#1"');
      expect((err as { details: { hint: string } }).details.hint).toContain("a, b, c");
      expect((err as { details: { hint: string } }).details.hint).not.toContain("phasekit:");
      expect(await history(root)).toEqual(before);
      expect(existsSync(path.join(root, "ai_plan", "f"))).toBe(false);
    } finally {
      await store?.close();
    }
  });

  it("a mark from a real step names the steps and the spends after it; the resumed body counts what it spent as before, once", async () => {
    const root = repo();
    await run(root, []);
    const marked = await rerunFrom({ repoRoot: root, target: "r", from: "a" });
    expect(marked.keys).toEqual(["a", "phasekit:budget#1", "b", "phasekit:budget#2", "c"]);
    expect((await history(root)).filter((e) => e.superseded).map((e) => e.key)).toEqual(["a", "phasekit:budget#1", "b", "phasekit:budget#2", "c"]);
    const effects: string[] = [];
    const again = await runWorkflow(
      { repoRoot: root, target: "r", toolName: "t", reenter: true, budgets: { turns: 100 }, createReporter: () => createReporter({ onChange: () => undefined }) },
      async (ctx: RunContext) => {
        for (const id of ["a", "b", "c"]) {
          await ctx.step(id, { id }, () => (effects.push(id), id));
          if (id !== "c") await ctx.budget.spend({ turns: 1 });
        }
        return ctx.budget.used().turns;
      },
    );
    expect(effects).toEqual(["a", "b", "c"]);
    expect(again).toMatchObject({ status: "completed", result: 2 });
    expect((await history(root)).filter((e) => e.superseded)).toEqual([]);
  });

  it("a rerun whose steps spend otherwise counts what the replay spent: no entry after a changed one keeps a stale total", async () => {
    const root = repo();
    await run(root, []); // a, 1 turn, b, 1 turn, c: 2 turns
    await rerunFrom({ repoRoot: root, target: "r", from: "a" });
    const spends: Record<string, number> = { a: 5, b: 1 };
    const again = await runWorkflow(
      { repoRoot: root, target: "r", toolName: "t", reenter: true, budgets: { turns: 100 }, createReporter: () => createReporter({ onChange: () => undefined }) },
      async (ctx: RunContext) => {
        for (const id of ["a", "b", "c"]) {
          await ctx.step(id, { id }, () => id);
          const turns = spends[id];
          if (turns !== undefined) await ctx.budget.spend({ turns });
        }
        return ctx.budget.used().turns;
      },
    );
    // a's spend changed (5, was 1); b's did not (1), but it adds to 5 now, not to 1.
    expect(again).toMatchObject({ status: "completed", result: 6 });
  });

  it("phasekit rerun --from a reserved key: the CLI's main entry refuses it, typed, in text and in --json", async () => {
    const root = repo();
    await run(root, []);
    const text = await phasekitInProcess(["--repo", root, "rerun", "r", "--from", "phasekit:budget#1"]);
    expect(text.code).toBe(2); // INVALID_OPTIONS is bad usage wherever it is thrown (cli/io.ts exitCodeOf)
    expect(text.stderr).toContain('"phasekit:budget#1"');
    expect(text.stderr).toContain("a, b, c");
    const doc = await phasekitInProcess(["--repo", root, "--json", "rerun", "r", "--from", "phasekit:budget#1"]);
    expect(doc.code).toBe(text.code);
    expect(JSON.parse(doc.stdout === "" ? doc.stderr : doc.stdout)).toMatchObject({ schema: "phasekit.error/1", error: { code: "INVALID_OPTIONS", details: { field: "from", value: "phasekit:budget#1" } } });
    expect((await history(root)).some((e) => e.superseded)).toBe(false);
  });
});
