/** Issue 21: budgets, progress thresholds and gates in definitions, and core's pure judgement over them. */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import * as core from "@phasekit/core";

const release = {
  name: "Release",
  budgets: { turns: 10, cost: 2 },
  progress: { idleTurns: 4 },
  phases: [
    { id: "build", name: "Build", budgets: { toolCalls: 3, onExhausted: "fail" } },
    { id: "test", name: "Test", progress: { sameToolCall: 2 }, gates: { verify: { commands: ["npm test"] }, onFail: "build" } },
    { id: "ship", name: "Ship", gates: { approve: { prompt: "Ship it?", schema: { type: "object", properties: { channel: { enum: ["beta", "stable"] } }, required: ["channel"] } }, onReject: "build" } },
  ],
};

function activeAt(defs: Record<string, unknown>, key: string, steps: number): core.ActiveWorkflow {
  const c = core.compileDefinitions(defs);
  if (!c.ok) throw new Error(c.error.message);
  const s = core.start(c.registry, { workflowKey: key, taskId: "t", taskDescription: "d" }, { now: 1 });
  if (!s.ok) throw new Error(s.error.message);
  let state = s.state;
  for (let i = 0; i < steps; i++) {
    const a = core.advance(c.registry, state, { now: 2 + i });
    if (!a.ok) throw new Error(a.error.message);
    state = a.state;
  }
  const r = core.resolveActive(c.registry, state);
  if (!r.ok || r.active === null) throw new Error("does not resolve");
  return r.active;
}

const used = (over: Partial<core.BudgetUsage>): core.BudgetUsage => ({ ...core.NO_USAGE, ...over });

describe("definitions", () => {
  it("accepts budgets, progress and gates, with onExhausted defaulting to pause", () => {
    const c = core.compileDefinitions({ release });
    expect(c.ok).toBe(true);
    if (!c.ok) return;
    expect(c.registry.workflows.get("release")?.budgets).toEqual({ turns: 10, cost: 2, onExhausted: "pause" });
  });

  it("reports every problem at once: unknown routing targets, a route without its gate, a bad schema, a bad field", () => {
    const bad = {
      name: "Bad",
      phases: [
        { id: "a", name: "A", gates: { verify: { commands: ["true"] }, onFail: "nowhere" } },
        { id: "b", name: "B", gates: { onReject: "a" } },
        { id: "c", name: "C", gates: { approve: { prompt: "ok?", schema: { type: 12 } } } },
      ],
    };
    const c = core.compileDefinitions({ bad, worse: { name: "W", budgets: { turns: -1, tokens: "many" }, phases: [{ id: "x", name: "X", progress: { loops: 3 } }] } });
    expect(c.ok).toBe(false);
    const paths = c.problems.map((p) => `${p.code} ${p.path}`);
    expect(paths).toEqual(
      expect.arrayContaining([
        "UNKNOWN_PHASE bad.phases[0].gates.onFail",
        "INVALID_DEFINITION bad.phases[1].gates.onReject",
        "INVALID_DEFINITION bad.phases[2].gates.approve.schema",
        "INVALID_DEFINITION worse.budgets.turns",
        "INVALID_DEFINITION worse.budgets.tokens",
        "INVALID_DEFINITION worse.phases[0].progress.loops",
      ]),
    );
    const unknown = c.problems.find((p) => p.code === "UNKNOWN_PHASE");
    expect(unknown?.message).toContain('"nowhere"');
    expect(unknown?.hint).toContain('"a", "b", "c"');
  });

  it("a definition without controls keeps its fingerprint (no defaults added at the top level)", () => {
    const plain = { name: "P", phases: [{ id: "a", name: "A" }] };
    const c = core.compileDefinitions({ plain });
    if (!c.ok) throw new Error("compile");
    expect(Object.keys(c.registry.workflows.get("plain") ?? {})).not.toContain("budgets");
    expect(Object.keys(c.registry.workflows.get("plain")?.phases[0] ?? {})).not.toContain("gates");
  });
});

describe("judgeControls", () => {
  it("names the first exhausted budget, the workflow's before the phase's, with what is left", () => {
    const a = activeAt({ release }, "release", 0);
    const j = core.judgeControls(a, { workflowUsed: used({ turns: 10, cost: 0.5 }), phaseUsed: used({ toolCalls: 3 }) });
    if (!j.ok) throw new Error(j.error.message);
    expect(j.judgement.budget.exhausted).toMatchObject({ exhausted: true, key: "turns", onExhausted: "pause", reason: "the workflow Release's budget of 10 turns is used up (10 used)" });
    expect(j.judgement.budget.workflow.left).toEqual({ turns: 0, cost: 1.5 });
    const phaseOnly = core.judgeControls(a, { workflowUsed: used({ turns: 9 }), phaseUsed: used({ toolCalls: 3 }) });
    if (!phaseOnly.ok) throw new Error("judge");
    expect(phaseOnly.judgement.budget.exhausted).toMatchObject({ key: "toolCalls", onExhausted: "fail", reason: "the phase Build's budget of 3 tool calls is used up (3 used)" });
  });

  it("merges progress thresholds phase over workflow over defaults, and names what repeated", () => {
    const test = activeAt({ release }, "release", 1);
    const j = core.judgeControls(test, { workflowUsed: core.NO_USAGE, phaseUsed: core.NO_USAGE, progress: { sameToolCall: { tool: "bash", args: '{"command":"ls"}', count: 2 } } });
    if (!j.ok) throw new Error("judge");
    expect(j.judgement.controls.progress).toEqual({ sameToolCall: 2, idleTurns: 4, sameStepFailures: core.DEFAULT_PROGRESS.sameStepFailures });
    expect(j.judgement.progress).toEqual({ stalled: true, rule: "sameToolCall", reason: 'no progress: the tool call bash {"command":"ls"} was made 2 times in a row with the same arguments' });
    const off = core.judgeControls(activeAt({ w: { name: "W", progress: { sameToolCall: 0 }, phases: [{ id: "a", name: "A" }] } }, "w", 0), {
      workflowUsed: core.NO_USAGE,
      phaseUsed: core.NO_USAGE,
      progress: { sameToolCall: { tool: "bash", args: "{}", count: 1000 } },
    });
    expect(off.ok && off.judgement.progress.stalled).toBe(false);
  });

  it("holds a phase at its verify gate until it passes, then at its approval; a rejection routes to onReject", () => {
    const test = activeAt({ release }, "release", 1);
    const judge = (a: core.ActiveWorkflow, gates: core.GateFacts) => {
      const j = core.judgeControls(a, { workflowUsed: core.NO_USAGE, phaseUsed: core.NO_USAGE, gates });
      if (!j.ok) throw new Error("judge");
      return j.judgement.gate;
    };
    expect(judge(test, {})).toMatchObject({ pass: false, gate: "verify", waitsFor: "agent", state: "run" });
    expect(judge(test, { verify: { passed: false, command: "npm test", output: "1 failing" } })).toMatchObject({ pass: false, state: "failed", routeTo: "build", reason: expect.stringContaining("1 failing") });
    expect(judge(test, { verify: { passed: true } })).toEqual({ pass: true });
    const ship = activeAt({ release }, "release", 2);
    expect(judge(ship, {})).toMatchObject({ pass: false, gate: "approve", waitsFor: "person", reason: "phase Ship waits for a person's approval: Ship it?" });
    expect(judge(ship, { approval: { decision: "rejected", reason: "not yet" } })).toMatchObject({ state: "rejected", routeTo: "build", reason: "phase Ship was rejected: not yet" });
    expect(judge(ship, { approval: { decision: "approved", data: { channel: "beta" } } })).toEqual({ pass: true });
  });

  it("refuses facts that are not counts with INVALID_OPTIONS", () => {
    const a = activeAt({ release }, "release", 0);
    const j = core.judgeControls(a, { workflowUsed: used({ turns: -1 }), phaseUsed: core.NO_USAGE });
    expect(j.ok ? "ok" : j.error.code).toBe("INVALID_OPTIONS");
    expect(j.ok ? "" : j.error.message).toContain("facts.workflowUsed.turns: expected a non-negative number, got -1.");
  });

  it("property: a budget is exhausted exactly when some limited quantity is used up, and left never goes below 0", () => {
    const limit = fc.option(fc.nat({ max: 50 }), { nil: undefined });
    fc.assert(
      fc.property(fc.record({ turns: limit, toolCalls: limit, tokens: limit }), fc.record({ turns: fc.nat({ max: 60 }), toolCalls: fc.nat({ max: 60 }), tokens: fc.nat({ max: 60 }) }), (limits, u) => {
        const defs = { w: { name: "W", budgets: Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined)), phases: [{ id: "a", name: "A" }] } };
        const j = core.judgeControls(activeAt(defs, "w", 0), { workflowUsed: used(u), phaseUsed: core.NO_USAGE });
        if (!j.ok) return false;
        const expected = (["turns", "toolCalls", "tokens"] as const).some((k) => limits[k] !== undefined && u[k] >= (limits[k] as number));
        const v = j.judgement.budget.workflow;
        return v.exhausted === expected && Object.values(v.left).every((x) => x >= 0);
      }),
      { numRuns: 200 },
    );
  });
});

describe("validateApproval", () => {
  const schema = release.phases[2]?.gates?.approve?.schema;
  it("accepts a payload the schema describes and names the first mismatch otherwise", () => {
    expect(core.validateApproval(schema, { channel: "beta" })).toEqual({ ok: true, data: { channel: "beta" } });
    const bad = core.validateApproval(schema, { channel: "nightly" });
    expect(bad.ok ? "ok" : bad.error.code).toBe("INVALID_APPROVAL");
    expect(bad.ok ? "" : bad.error.message).toContain("payload.channel");
    expect(core.validateApproval(undefined, 42)).toEqual({ ok: true, data: 42 });
  });
});

describe("judgeBudget and judgeProgress", () => {
  it("name the field of a bad argument and what was found there, in describeSchemaIssue's words", () => {
    const limits = core.judgeBudget({ turns: -1, onExhausted: "pause" }, core.NO_USAGE, "run r");
    expect(limits).toMatchObject({ ok: false, error: { code: "INVALID_OPTIONS", message: expect.stringContaining("limits.turns: expected a non-negative number, got -1."), details: { field: "limits" } } });
    const used = core.judgeBudget(undefined, { ...core.NO_USAGE, tokens: "many" as never }, "run r");
    expect(used).toMatchObject({ ok: false, error: { message: expect.stringContaining('used.tokens: expected a number, got "many".'), details: { field: "used" } } });
    const thresholds = core.judgeProgress({ idleTurns: "4" as never }, {});
    expect(thresholds).toMatchObject({ ok: false, error: { message: expect.stringContaining('thresholds.idleTurns: expected a number, got "4".'), details: { field: "thresholds" } } });
    const counters = core.judgeProgress({}, { idleTurns: -1 });
    expect(counters).toMatchObject({ ok: false, error: { message: expect.stringContaining("counters.idleTurns: expected a non-negative number, got -1."), details: { field: "counters" } } });
  });
});
