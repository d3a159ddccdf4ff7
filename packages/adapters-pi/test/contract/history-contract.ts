/**
 * One history per run, as every backend must keep it: `ctx.step` results and `ctx.workflow.dispatch` transitions
 * replay from the same record, so a body that fails (or is killed) anywhere and runs again sees exactly what it
 * saw the first time, and no side effect or transition happens twice. Run against fs, memory and PostgreSQL.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runWorkflow, createReporter, rerunFrom, type PlanStore, type RunContext, type RunResult } from "@phasekit/adapters-pi";
import { releaseRegistry } from "../../../../examples/release-workflow.js";
import { latestBudgetTotal } from "../../src/run/budget.js";
import { budgetRerunContractCases } from "./budget-rerun-contract.js";
import { forkContractCases } from "./fork-contract.js";
import { rerunContractCases } from "./rerun-contract.js";

/** A body is a script of steps and dispatches; crashes are injected by step index. */
export type Op = { step: string } | { dispatch: "advance" | "loop" | "cancel" };

/** The release workflow walked through both sub-workflows, with one loop of the security audit. */
export const WALK: readonly Op[] = [
  { step: "build" },
  { dispatch: "advance" },
  { step: "static" },
  { dispatch: "advance" },
  { step: "threat" },
  { dispatch: "advance" },
  { step: "deps" },
  { dispatch: "loop" },
  { step: "threat-again" },
  { dispatch: "advance" },
  { step: "deps-again" },
  { dispatch: "advance" },
  { step: "publish" },
  { dispatch: "advance" },
];

interface Script {
  /** Step index → how many more times that step's fn throws before it succeeds. */
  failures: Map<string, number>;
  /** Successful side effects per step over every run. */
  effects: Map<string, number>;
}

/** Runs the script once; returns what the body saw at each op (the core phase, the metadata phase). */
async function walk(ctx: RunContext, ops: readonly Op[], script: Script): Promise<string[]> {
  const seen: string[] = [];
  const wf = ctx.workflow;
  if (wf === null) throw new Error("the run carries no workflow");
  for (const op of ops) {
    const core = wf.state();
    const here = `${core.status}:${core.currentPath.map((s) => `${s.workflowKey}/${s.phaseIndex}`).join(">")}|${ctx.metadata().phase ?? "-"}`;
    if ("step" in op) {
      seen.push(`${op.step}@${here}`);
      // The input is what the body knows at that point: a replay that showed another phase would re-run the step.
      await ctx.step(op.step, { phase: ctx.metadata().phase ?? null }, () => {
        const left = script.failures.get(op.step) ?? 0;
        if (left > 0) {
          script.failures.set(op.step, left - 1);
          throw new Error(`${op.step} crashed`);
        }
        script.effects.set(op.step, (script.effects.get(op.step) ?? 0) + 1);
        return `${op.step} done`;
      });
    } else {
      const r = await wf.dispatch({ type: op.dispatch });
      seen.push(`${op.dispatch}@${here}->${r.ok ? r.happened.type : r.error.code}`);
    }
  }
  return seen;
}

/** Runs `body` on target `slug` until it stops failing (at most `tries` times); returns every run's result. */
async function untilDone<T>(store: PlanStore, repoRoot: string, slug: string, body: (ctx: RunContext) => Promise<T>, tries = 4, withWorkflow = true): Promise<Array<RunResult<T> | Error>> {
  const out: Array<RunResult<T> | Error> = [];
  for (let i = 0; i < tries; i++) {
    const r = await runWorkflow(
      {
        repoRoot,
        target: slug,
        toolName: "history-contract",
        store,
        ...(withWorkflow ? { workflow: { registry: releaseRegistry(), workflowKey: "release", taskDescription: "ship" } } : {}),
        createReporter: () => createReporter({ onChange: () => undefined }),
        onError: () => undefined,
      },
      body,
    ).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
    out.push(r);
    if (!(r instanceof Error)) return out;
  }
  return out;
}

/** The history contract, for a store factory that returns an empty store per call. */
export function runHistoryContract(name: string, open: () => Promise<PlanStore>): void {
  describe(`one history per run: ${name}`, () => {
    const repoRoot = (): string => mkdtempSync(path.join(tmpdir(), "phasekit-history-"));

    it("a body that dispatches after every step replays its dispatches: a failure after any step changes nothing it sees", async () => {
      const store = await open();
      try {
        const reference: Script = { failures: new Map(), effects: new Map() };
        let expected: string[] = [];
        const [clean] = await untilDone(store, repoRoot(), "reference", async (ctx) => (expected = await walk(ctx, WALK, reference)));
        expect(clean).toMatchObject({ status: "completed" });
        const steps = WALK.flatMap((op) => ("step" in op ? [op.step] : []));
        for (const crashAt of steps) {
          const script: Script = { failures: new Map([[crashAt, 1]]), effects: new Map() };
          const seenPerRun: string[][] = [];
          const runs = await untilDone(store, repoRoot(), `crash-${crashAt}`, async (ctx) => {
            const seen: string[] = [];
            seenPerRun.push(seen);
            seen.push(...(await walk(ctx, WALK, script)));
            return seen;
          });
          expect(runs.map((r) => (r instanceof Error ? "error" : r.status)), crashAt).toEqual(["error", "completed"]);
          const last = runs[1] as RunResult<string[]> & { status: "completed" };
          // The resumed body saw, at every op, exactly what the uninterrupted body saw.
          expect(last.result, crashAt).toEqual(expected);
          expect(last.metadata, crashAt).toMatchObject({ status: "completed", state: { status: "completed" } });
          // Every step's side effect happened once, across both runs.
          expect(Object.fromEntries(script.effects), crashAt).toEqual(Object.fromEntries(steps.map((s) => [s, 1])));
        }
      } finally {
        await store.close();
      }
    });

    it("a finished run entered again replays to the same end without moving the workflow", async () => {
      const store = await open();
      try {
        const root = repoRoot();
        const script: Script = { failures: new Map(), effects: new Map() };
        let first: string[] = [];
        await untilDone(store, root, "again", async (ctx) => (first = await walk(ctx, WALK, script)));
        const before = await store.readMetadata("again");
        const again = await runWorkflow(
          { repoRoot: root, target: "again", toolName: "history-contract", store, reenter: true, workflow: { registry: releaseRegistry(), workflowKey: "release", taskDescription: "ship" } },
          (ctx) => walk(ctx, WALK, script),
        );
        expect(again).toMatchObject({ status: "completed", result: first });
        expect(before.ok && before.metadata?.state).toMatchObject({ status: "completed" });
        const after = await store.readMetadata("again");
        expect(after.ok && after.metadata?.state).toEqual(before.ok ? before.metadata?.state : undefined);
        expect([...script.effects.values()].every((n) => n === 1)).toBe(true);
      } finally {
        await store.close();
      }
    });

    it("refusals and an armed cancel replay as they happened; the confirming cancel is live", async () => {
      const store = await open();
      try {
        const script: Script = { failures: new Map([["between", 1]]), effects: new Map() };
        const ops: Op[] = [{ dispatch: "loop" }, { dispatch: "cancel" }, { step: "between" }, { dispatch: "cancel" }];
        const runs = await untilDone(store, repoRoot(), "armed", (ctx) => walk(ctx, ops, script));
        expect(runs.map((r) => (r instanceof Error ? "error" : r.status))).toEqual(["error", "cancelled"]);
        const last = runs[1] as RunResult<string[]> & { status: "cancelled" };
        expect(last.metadata).toMatchObject({ status: "cancelled", state: { status: "cancelled", cancelPending: false } });
      } finally {
        await store.close();
      }
    });

    it("a retry in a catch is the same step's next attempt: on resume it is reused, not repeated", async () => {
      const store = await open();
      try {
        let sends = 0;
        let smtpDown = true;
        let crash = true;
        const send = (): string => {
          if (smtpDown) {
            smtpDown = false;
            throw new Error("smtp down");
          }
          sends++;
          return "sent";
        };
        const runs = await untilDone(store, repoRoot(), "email", async (ctx) => {
          let receipt: string;
          try {
            receipt = await ctx.step("email", { to: "a@example.com" }, send);
          } catch {
            receipt = await ctx.step("email", { to: "a@example.com" }, send);
          }
          await ctx.step("after", {}, () => {
            if (crash) {
              crash = false;
              throw new Error("crash after the email");
            }
            return "ok";
          });
          return { receipt, steps: ctx.steps.map((s) => `${s.stepId}:${s.outcome}`) };
        }, 4, false);
        expect(runs.map((r) => (r instanceof Error ? "error" : r.status))).toEqual(["error", "completed"]);
        expect(sends).toBe(1);
        expect(runs[1]).toMatchObject({ status: "completed", result: { receipt: "sent", steps: ["email:reused", "after:ran"] } });
      } finally {
        await store.close();
      }
    });

    it("a failed item of a loop is not the next item's attempt: each input keeps its own occurrence", async () => {
      const store = await open();
      try {
        const runsOf = new Map<string, number>();
        let failB = true;
        const runs = await untilDone(store, repoRoot(), "items", async (ctx) => {
          const done: string[] = [];
          for (const item of ["a", "b", "c"]) {
            try {
              await ctx.step("lint", { item }, () => {
                runsOf.set(item, (runsOf.get(item) ?? 0) + 1);
                if (item === "b" && failB) {
                  failB = false;
                  throw new Error("lint b failed");
                }
                return item;
              });
              done.push(item);
            } catch {
              done.push(`${item}!`);
            }
          }
          if (done.includes("b!")) throw new Error("try again");
          return done;
        }, 4, false);
        expect(runs.map((r) => (r instanceof Error ? "error" : r.status))).toEqual(["error", "completed"]);
        // a and c ran once (reused on the second run); only the failed b ran again.
        expect(Object.fromEntries(runsOf)).toEqual({ a: 1, b: 2, c: 1 });
      } finally {
        await store.close();
      }
    });

    it("a failure reason with a NUL and an emoji cut by the cap is stored, well-formed, on every store", async () => {
      const store = await open();
      try {
        // The cap (10,000 UTF-16 units) falls inside the third emoji; PostgreSQL refuses NUL and lone surrogates.
        const message = `${"a".repeat(9_991)}\u0000bad${"😀".repeat(10)}`;
        const runs = await untilDone(store, repoRoot(), "reason", () => Promise.reject(new Error(message)), 1, false);
        expect(runs[0]).toBeInstanceOf(Error);
        const read = await store.readMetadata("reason");
        const reason = read.ok ? read.metadata?.failureReason : undefined;
        expect(read).toMatchObject({ ok: true, metadata: { status: "failed" } });
        expect(reason?.length).toBe(10_000);
        expect(reason?.includes("\u0000")).toBe(false);
        expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(reason ?? "")).toBe(false);
      } finally {
        await store.close();
      }
    });

    it("a dispatch inside a step's function is refused (it would not replay when the step is reused)", async () => {
      const store = await open();
      try {
        const runs = await untilDone(store, repoRoot(), "inside", (ctx) => ctx.step("inner", {}, async () => ((await ctx.workflow?.dispatch({ type: "advance" })) ? "moved" : "none")), 1);
        expect(runs[0]).toMatchObject({ code: "INVALID_STATE", details: { stepId: "inner", value: "advance" } });
        const read = await store.readMetadata("inside");
        expect(read).toMatchObject({ ok: true, metadata: { status: "failed", phase: "build" } });
      } finally {
        await store.close();
      }
    });

    it("a control request whose reason its cap cuts inside an emoji, with a NUL, is filed and read back well-formed", async () => {
      const store = await open();
      try {
        const running = { slug: "ctl", ownerTool: "t", currentTool: "t", status: "running" as const, createdAt: new Date(0).toISOString(), updatedAt: new Date(0).toISOString() };
        expect(await store.writeMetadata("ctl", running, null)).toMatchObject({ ok: true });
        const reason = `${"r".repeat(1_995)}\u0000${"😀".repeat(5)}`; // the 2,000-unit cap falls inside the third emoji
        const filed = await store.requestControl("ctl", "stop", { reason });
        expect(filed).toMatchObject({ ok: true });
        const read = await store.readControl("ctl", "stop");
        const got = read.ok ? read.request?.reason : undefined;
        expect(got?.length).toBe(2_000);
        expect(got?.includes("\u0000")).toBe(false);
        expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(got ?? "")).toBe(false);
      } finally {
        await store.close();
      }
    });

    it("the latest budget total is read back from the history through the store (under the run's lease)", async () => {
      const store = await open();
      try {
        const root = repoRoot();
        expect(await latestBudgetTotal(store, "spent", () => new Date())).toBeNull();
        await untilDone(store, root, "spent", async (ctx) => {
          await ctx.budget.spend({ turns: 1, tokens: 500, cost: 0.01 });
          await ctx.budget.spend({ turns: 1, toolCalls: 3 });
          return "ok";
        }, 1, false);
        // Through the run's lease, as the pi extension reads it when it resumes the run in another session.
        const lock = await store.lock("spent", { owner: { tool: "reader" } });
        if (!lock.ok) throw lock.error;
        try {
          expect(await latestBudgetTotal(lock.lock.store ?? store, "spent", () => new Date())).toEqual({ n: 2, total: { turns: 2, toolCalls: 3, tokens: 500, cost: 0.01 }, extra: {} });
        } finally {
          await lock.lock.release();
        }
      } finally {
        await store.close();
      }
    });

    it("rerunFrom a step: it and every step recorded after it run again at the next resume, the ones before are reused", async () => {
      const store = await open();
      try {
        const root = repoRoot();
        const effects = new Map<string, number>();
        const body = async (ctx: RunContext): Promise<string[]> => {
          const out: string[] = [];
          for (const s of ["a", "b", "c"]) {
            out.push(
              await ctx.step(s, { s }, () => {
                effects.set(s, (effects.get(s) ?? 0) + 1);
                return `${s}${effects.get(s)}`;
              }),
            );
          }
          return out;
        };
        expect(await untilDone(store, root, "rerun", body, 1, false)).toMatchObject([{ status: "completed", result: ["a1", "b1", "c1"] }]);
        expect(await rerunFrom({ store, target: "rerun", from: "b" })).toMatchObject({ keys: ["b", "c"] });
        const marked = await (await store.checkpoints("rerun", { now: () => new Date() })).records();
        expect(marked.map((r) => [r.stepId, r.status, r.superseded ?? false])).toEqual([["a", "completed", false], ["b", "completed", true], ["c", "completed", true]]);
        await expect(rerunFrom({ store, target: "rerun", from: "zz" })).rejects.toMatchObject({ code: "NOT_FOUND", details: { field: "from", value: "zz" } });
        // Retention keeps a finished run that waits for its rerun, on every store (engine/retention-policy.ts).
        const waiting = await store.gc({ keep: 0, now: () => new Date(), dryRun: true });
        expect(waiting.kept.find((e) => e.slug === "rerun")).toMatchObject({ reason: "rerun-pending" });
        const again = await runWorkflow({ repoRoot: root, target: "rerun", toolName: "history-contract", store, reenter: true, createReporter: () => createReporter({ onChange: () => undefined }) }, body);
        expect(again).toMatchObject({ status: "completed", result: ["a1", "b2", "c2"] });
        expect(Object.fromEntries(effects)).toEqual({ a: 1, b: 2, c: 2 });
        const after = await (await store.checkpoints("rerun", { now: () => new Date() })).records();
        expect(after.map((r) => [r.stepId, r.status, r.superseded ?? false])).toEqual([["a", "completed", false], ["b", "completed", false], ["c", "completed", false]]);
        const done = await store.gc({ keep: 0, now: () => new Date(), dryRun: true });
        expect(done.removed.find((e) => e.slug === "rerun")).toMatchObject({ reason: "beyond-keep" });
      } finally {
        await store.close();
      }
    });

    rerunContractCases(open, repoRoot);
    budgetRerunContractCases(open, repoRoot);
    forkContractCases(open, repoRoot);

    it("a body that returns no plain JSON fails its attempt (recorded, counted); one that returns nothing gives null, first run and replay alike", async () => {
      const store = await open();
      try {
        const root = repoRoot();
        const attempts: number[] = [];
        const seen: unknown[] = [];
        let broken = true;
        const body = async (ctx: RunContext): Promise<string> => {
          seen.push(await ctx.step("nothing", {}, () => undefined));
          await ctx.step("odd", {}, (_signal, attempt) => {
            attempts.push(attempt);
            return (broken ? new Map([["a", 1]]) : { a: 1 }) as unknown as { a: number };
          });
          return "ok";
        };
        const [first] = await untilDone(store, root, "odd", body, 1, false);
        expect(first).toMatchObject({ code: "UNSERIALIZABLE" });
        const failed = await (await store.checkpoints("odd", { now: () => new Date() })).record("odd");
        expect(failed).toMatchObject({ status: "failed", attempt: attempts.length, error: expect.stringContaining("not plain JSON") });
        broken = false;
        const tried = attempts.length;
        expect(await untilDone(store, root, "odd", body, 1, false)).toMatchObject([{ status: "completed", result: "ok" }]);
        // The next run's attempt counts the failed ones.
        expect(attempts.at(-1)).toBe(tried + 1);
        expect(seen).toEqual([null, null]);
      } finally {
        await store.close();
      }
    });

    it("ids in the reserved phasekit: namespace are refused", async () => {
      const store = await open();
      try {
        const runs = await untilDone(store, repoRoot(), "reserved", (ctx) => ctx.step("phasekit:dispatch#1", {}, () => 1), 1, false);
        expect(runs[0]).toMatchObject({ code: "INVALID_OPTIONS", details: { field: "id" } });
      } finally {
        await store.close();
      }
    });
  });
}
