/** ctx.step as an extension author uses it: loops with one id, parallel steps, void steps, timeouts, retries, stop. */
import { describe, expect, it } from "vitest";
import { setTimeout as sleep } from "node:timers/promises";
import { isWorkflowError } from "@phasekit/core";
import { requestStop, runWorkflow, type RunContext } from "@phasekit/adapters-pi";
import { useTempRepos } from "./helpers/temp-repos.js";

const repo = useTempRepos("pk-steps-");
const errorOf = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e);

describe("repeated step ids are keyed by occurrence", () => {
  it("a loop of ctx.step('lint', {file}) over three files is reused whole on resume", async () => {
    const root = repo();
    const ran: string[] = [];
    const body = (failAfter: boolean) => async (ctx: RunContext) => {
      for (const file of ["a.ts", "b.ts", "c.ts"]) await ctx.step("lint", { file }, () => (ran.push(file), `ok ${file}`));
      if (failAfter) throw new Error("later step failed");
    };
    await errorOf(runWorkflow({ repoRoot: root, target: "loop", toolName: "t" }, body(true)));
    expect(ran).toEqual(["a.ts", "b.ts", "c.ts"]);
    const r = await runWorkflow({ repoRoot: root, target: "loop", toolName: "t" }, body(false));
    expect(ran).toEqual(["a.ts", "b.ts", "c.ts"]);
    expect(r.status === "completed" && r.steps.map((s) => [s.stepId, s.outcome])).toEqual([
      ["lint", "reused"],
      ["lint#2", "reused"],
      ["lint#3", "reused"],
    ]);
  });
});

describe("a step's input is taken when ctx.step is called", () => {
  it("an input object changed right after the call is recorded as it was at the call: the resume with that value reuses the step", async () => {
    const root = repo();
    let runs = 0;
    await runWorkflow({ repoRoot: root, target: "snap", toolName: "t" }, async (ctx) => {
      const input = { n: 1 };
      const pending = ctx.step("s", input, () => ++runs);
      input.n = 2; // the caller reuses its object for the next item
      return pending;
    });
    const r = await runWorkflow({ repoRoot: root, target: "snap", toolName: "t", reenter: true }, async (ctx) => ctx.step("s", { n: 1 }, () => ++runs));
    expect(r.status === "completed" && r.steps.map((s) => s.outcome)).toEqual(["reused"]);
    expect(runs).toBe(1);
  });
});

describe("parallel steps", () => {
  it("Promise.all of two steps works and both are reused on resume", async () => {
    const root = repo();
    let runs = 0;
    const body = (fail: boolean) => async (ctx: RunContext) => {
      const [a, b] = await Promise.all([
        ctx.step("a", {}, async () => (runs++, await sleep(20), "A")),
        ctx.step("b", {}, async () => (runs++, await sleep(5), "B")),
      ]);
      if (fail) throw new Error("after");
      return `${a}${b}`;
    };
    await errorOf(runWorkflow({ repoRoot: root, target: "par", toolName: "t" }, body(true)));
    expect(runs).toBe(2);
    const r = await runWorkflow({ repoRoot: root, target: "par", toolName: "t" }, body(false));
    expect(r.status === "completed" && r.result).toBe("AB");
    expect(runs).toBe(2);
    expect(r.metadata.currentStepId).toBeUndefined();
  });
});

describe("void steps", () => {
  it("a step that returns nothing is stored as null and not run again on resume", async () => {
    const root = repo();
    let emails = 0;
    const body = (fail: boolean) => async (ctx: RunContext) => {
      const v = await ctx.step("email", { to: "x" }, () => void emails++);
      if (fail) throw new Error("after");
      return v;
    };
    await errorOf(runWorkflow({ repoRoot: root, target: "void", toolName: "t" }, body(true)));
    const r = await runWorkflow({ repoRoot: root, target: "void", toolName: "t" }, body(false));
    expect(emails).toBe(1);
    expect(r.status === "completed" && r.result).toBeNull();
  });
});

describe("timeouts, retries, attempts", () => {
  it("timeoutMs aborts the step's signal and fails it with STEP_TIMEOUT", async () => {
    const root = repo();
    let aborted: unknown;
    const e = await errorOf(
      runWorkflow({ repoRoot: root, target: "slow", toolName: "t" }, (ctx) =>
        ctx.step("slow", {}, (signal) => new Promise<string>((resolve) => {
          signal.addEventListener("abort", () => (aborted = signal.reason));
          setTimeout(() => resolve("late"), 2_000);
        }), { timeoutMs: 50 }),
      ),
    );
    expect(isWorkflowError(e, "STEP_TIMEOUT")).toBe(true);
    expect(isWorkflowError(aborted, "STEP_TIMEOUT")).toBe(true);
  });
  it("retries with back-off inside the run, passing the attempt number", async () => {
    const root = repo();
    const attempts: number[] = [];
    const r = await runWorkflow({ repoRoot: root, target: "flaky", toolName: "t", maxAttempts: 5 }, (ctx) =>
      ctx.step("flaky", {}, (_signal, attempt) => {
        attempts.push(attempt);
        if (attempt < 3) throw new Error(`flake ${attempt}`);
        return attempt;
      }, { retries: 3, backoffMs: 5 }),
    );
    expect(r.status === "completed" && r.result).toBe(3);
    expect(attempts).toEqual([1, 2, 3]);
  });
  it("retries stop at maxAttempts", async () => {
    const root = repo();
    let n = 0;
    const e = await errorOf(runWorkflow({ repoRoot: root, target: "never", toolName: "t", maxAttempts: 2 }, (ctx) =>
      ctx.step("never", {}, () => { n++; throw new Error("always"); }, { retries: 10, backoffMs: 1 }),
    ));
    expect(n).toBe(2);
    expect(e).toBeInstanceOf(Error);
  });
});

describe("stop", () => {
  it("a stop aborts the in-flight step's signal and the run ends cancelled", async () => {
    const root = repo();
    let reason: unknown;
    const r = await runWorkflow({ repoRoot: root, target: "stopme", toolName: "t" }, (ctx) =>
      ctx.step("long", {}, (signal) => new Promise<string>((resolve, reject) => {
        setTimeout(() => void requestStop({ repoRoot: root, target: "stopme", reason: "enough" }), 20);
        const t = setTimeout(() => resolve("finished"), 5_000);
        signal.addEventListener("abort", () => (clearTimeout(t), (reason = signal.reason), reject(signal.reason)));
      })),
    );
    expect(isWorkflowError(reason, "RUN_STOPPED")).toBe(true);
    expect(r.status).toBe("cancelled");
  });

  it("a stop aborts the signal of the step in flight only: the steps that ended keep theirs, and their listeners never run", async () => {
    const root = repo();
    const ended: AbortSignal[] = [];
    let heard = 0;
    let inFlight: AbortSignal | undefined;
    const r = await runWorkflow({ repoRoot: root, target: "stop-one", toolName: "t" }, async (ctx) => {
      for (let i = 0; i < 15; i++) {
        await ctx.step(`done-${i}`, {}, (signal) => {
          // A body that leaves its listener behind (a child it would kill, a rollback): it must never fire later.
          signal.addEventListener("abort", () => void heard++);
          ended.push(signal);
          return i;
        });
      }
      await ctx.step("long", {}, (signal) => new Promise<string>((_resolve, reject) => {
        inFlight = signal;
        void requestStop({ repoRoot: root, target: "stop-one", reason: "enough" });
        signal.addEventListener("abort", () => reject(signal.reason));
      }));
    });
    expect(r.status).toBe("cancelled");
    expect(inFlight?.aborted).toBe(true);
    expect(new Set(ended).size).toBe(15);
    expect(ended.filter((s) => s.aborted)).toHaveLength(0);
    expect(heard).toBe(0);
  });

  it("parallel steps, with a time limit, without, or waiting out a retry's back-off, add no listener per step to the lock's signal", async () => {
    const root = repo();
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on("warning", onWarning);
    try {
      let letGo!: () => void;
      const gate = new Promise<void>((resolve) => (letGo = resolve));
      const r = await runWorkflow({ repoRoot: root, target: "many", toolName: "t" }, async (ctx) => {
        const steps = Array.from({ length: 40 }, (_, i) => ctx.step(`p-${i}`, {}, async () => (await gate, i), i % 2 === 0 ? { timeoutMs: 60_000 } : {}));
        // Each fails its first attempt, so all twenty wait out their back-off at once.
        const tried = new Set<number>();
        const retried = Array.from({ length: 20 }, (_, i) =>
          ctx.step(`r-${i}`, {}, async () => {
            await gate;
            if (!tried.has(i)) throw (tried.add(i), new Error("first attempt fails"));
            return i;
          }, { retries: 1, backoffMs: 50 }),
        );
        letGo();
        return Promise.all([...steps, ...retried]);
      });
      expect(r.status).toBe("completed");
      // Warnings are emitted on a later tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning").map((w) => w.message)).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });
});
