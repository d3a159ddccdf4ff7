/** One test per defect of issue 9 ("@phasekit/core v2"), named after it; each reproduces the report first. */
import { describe, expect, it } from "vitest";
import * as core from "@phasekit/core";
import { compileDefinitions } from "../src/definitions/compile.js";
import { isCompiledRegistry, MAX_NESTING, type WorkflowRegistry } from "../src/definitions/registry.js";
import { FrozenSet } from "../src/definitions/frozen.js";
import { migrateState, parseState } from "../src/state/migrate.js";
import { toPersisted, type WorkflowState } from "../src/state/schema.js";
import { advance } from "../src/transitions/advance.js";
import { cancel } from "../src/transitions/cancel.js";
import { loop } from "../src/transitions/loop.js";
import { reduce } from "../src/transitions/reduce.js";
import { resolveActive } from "../src/transitions/resolve-active.js";
import { checkTool } from "../src/policy/check-tool.js";
import { completionMessage } from "../src/present/messages.js";
import { at, registryOf, started } from "./helpers/core-fixtures.js";

const ctx = { now: 5_000 };
const code = (r: { ok: boolean; error?: { code: string } }): string | true => (r.ok ? true : (r.error?.code ?? "?"));

describe("issue 9 defects", () => {
  it("defect 1: advance, loop, resolveActive and checkTool all refuse a path that does not resolve (no move, no silent allow)", () => {
    const reg = registryOf({
      a: { name: "A", phases: [{ id: "plan", name: "Plan" }, { id: "ship", name: "Ship" }] },
      review: { name: "Review", show: false, phases: [{ id: "r", name: "R", tools: { whitelist: ["read"] } }] },
    });
    // As after a definition changed under a live run: phase 0 of `a` no longer references `review`.
    const s = at("a", [["a", 0], ["review", 0]]);
    expect(code(resolveActive(reg, s))).toBe("INVALID_PATH_INDEX");
    expect(code(checkTool(reg, s, "bash"))).toBe("INVALID_PATH_INDEX");
    expect(code(loop(reg, s, ctx))).toBe("INVALID_PATH_INDEX");
    expect(code(advance(reg, s, ctx))).toBe("INVALID_PATH_INDEX");
    // workflow_step stays allowed so the run can still be cancelled.
    expect(checkTool(reg, s, "workflow_step")).toEqual({ ok: true, allowed: true });
    expect(code(reduce(reg, s, { type: "cancel-now" }, ctx))).toBe(true);
  });

  it("defect 2: a dropped workflow is always a reported problem, whatever its size (10,001 phases, a __proto__ key in the first)", () => {
    const phases = Array.from({ length: 10_001 }, (_, i) => ({ id: `p${i}`, name: `P${i}` }));
    const big = JSON.parse(JSON.stringify({ name: "Big", phases }).replace('{"id":"p0"', '{"__proto__":{"x":1},"id":"p0"')) as unknown;
    const raw = { big, small: { name: "Small", phases: [{ id: "a", name: "A" }] } };
    const strict = compileDefinitions(raw);
    expect(strict.ok).toBe(false);
    expect(strict.problems.some((p) => p.workflowKey === "big" && p.path === "big.phases[0].__proto__")).toBe(true);
    const lenient = compileDefinitions(raw, { keepHealthy: true });
    if (!lenient.ok) throw new Error(lenient.error.message);
    expect([...lenient.registry.workflows.keys()]).toEqual(["small"]);
    expect(lenient.problems.map((p) => p.workflowKey)).toContain("big");
  });

  it("defect 3: pi-workflows entries without taskId (or with \"\") migrate with a deterministic derived id and a note", () => {
    const entry = { active: true, workflowKey: "w", currentPath: [{ workflowKey: "w", phaseIndex: 0 }], taskDescription: "fix it", startedAt: 1_000 };
    for (const raw of [entry, { ...entry, taskId: "" }]) {
      const r = migrateState(raw);
      if (!r.ok) throw new Error(r.error.message);
      expect(r.state.taskId).toMatch(/^migrated-[0-9a-f]{16}$/);
      expect(r.notes.join(" ")).toContain("taskId was");
      const again = migrateState(structuredClone(raw));
      expect(again.ok && again.state.taskId).toBe(r.state.taskId);
    }
    const other = migrateState({ ...entry, startedAt: 2_000 });
    expect(other.ok && other.state.taskId).not.toBe((migrateState(entry) as { state: WorkflowState }).state.taskId);
    expect(migrateState({ ...entry, taskId: "t-1" })).toMatchObject({ ok: true, notes: [], state: { taskId: "t-1" } });
  });

  it("defect 4: an empty currentPath is a typed refusal everywhere, never a TypeError", () => {
    const reg = registryOf({ w: { name: "W", phases: [{ id: "a", name: "A" }] } });
    const s = { ...at("w", [["w", 0]]), currentPath: [] } as WorkflowState;
    for (const r of [advance(reg, s, ctx), loop(reg, s, ctx), resolveActive(reg, s), checkTool(reg, s, "read")]) expect(code(r)).toBe("INVALID_STATE");
  });

  it("defect 5: nesting deeper than MAX_NESTING is its own compile problem (not a cycle), and the limit itself starts", () => {
    const chain = (levels: number): Record<string, unknown> => {
      const defs: Record<string, unknown> = {};
      for (let i = 1; i < levels; i++) defs[`w${i}`] = { name: `W${i}`, show: i === 1, phases: [{ subworkflow: `w${i + 1}` }] };
      defs[`w${levels}`] = { name: "Leaf", show: false, phases: [{ id: "leaf", name: "Leaf" }] };
      return defs;
    };
    const tooDeep = compileDefinitions(chain(MAX_NESTING + 1));
    expect(tooDeep.ok).toBe(false);
    expect(tooDeep.problems.find((p) => p.workflowKey === "w1")?.code).toBe("NESTING_TOO_DEEP");
    expect(tooDeep.problems.some((p) => p.code === "DEFINITION_CYCLE")).toBe(false);
    const limit = registryOf(chain(MAX_NESTING));
    expect(started(limit, "w1").currentPath).toHaveLength(MAX_NESTING);
  });

  it("defect 6: workflows keyed name, phases, description or workflows are data, never fields", () => {
    const def = (n: string): object => ({ name: n, phases: [{ id: "a", name: "A" }] });
    const set = { name: def("N"), phases: def("P"), description: def("D"), other: def("O") };
    // One input shape (issue 18): the argument is always the map by key, so "workflows" is a key like any other.
    for (const raw of [set, { ...set, workflows: def("W") }]) {
      const r = compileDefinitions(raw);
      if (!r.ok) throw new Error(r.error.message);
      expect([...r.registry.workflows.keys()].sort()).toEqual(Object.keys(raw).sort());
    }
  });

  it("defect 7: outcomes and the compiled registry are read-only; only compileDefinitions makes a registry", () => {
    const reg = registryOf({ a: { name: "A", phases: [{ id: "x", name: "X" }, { id: "y", name: "Y" }] }, b: { name: "B", show: false, phases: [{ id: "z", name: "Z" }] } });
    const s = started(reg, "a");
    const r = advance(reg, s, ctx);
    if (!r.ok) throw new Error(r.error.message);
    // @ts-expect-error the path of an outcome is readonly (it shares segments with the input)
    r.state.currentPath[0].phaseIndex = 9;
    const def = reg.workflows.get("a");
    // @ts-expect-error compiled phases are readonly
    expect(() => def?.phases.push({ subworkflow: "a" })).toThrow(TypeError);
    expect(() => (reg.workflows as Map<string, unknown>).set("c", {})).toThrow(TypeError);
    expect(reg.workflows.get("a")?.phases).toHaveLength(2);
    const forged = { ...reg } as WorkflowRegistry;
    expect(isCompiledRegistry(forged)).toBe(false);
    expect(code(advance(forged, s, ctx))).toBe("INVALID_REGISTRY");
  });

  it("defect 8: parsing a state never keeps an armed cancel; one cancel after a reload only arms", () => {
    const reg = registryOf({ w: { name: "W", phases: [{ id: "a", name: "A" }] } });
    const armed = cancel(reg, started(reg, "w"), ctx);
    if (!armed.ok) throw new Error(armed.error.message);
    const written = JSON.stringify({ ...toPersisted(armed.state), cancelPending: true }); // a writer that did not disarm
    const read = parseState(written);
    if (!read.ok) throw new Error(read.error.message);
    expect(read.state.cancelPending).toBe(false);
    const once = cancel(reg, read.state, ctx);
    expect(once.ok && once.happened.type).toBe("cancel-armed");
  });

  it("defect 9: the completion message's phase count is computed once at compile (30 levels of two references each)", () => {
    const levels = 30;
    const defs: Record<string, unknown> = {};
    for (let i = 0; i < levels - 1; i++) defs[`w${i}`] = { name: `W${i}`, show: i === 0, phases: [{ subworkflow: `w${i + 1}` }, { subworkflow: `w${i + 1}` }] };
    defs[`w${levels - 1}`] = { name: "Leaf", show: false, phases: [{ id: "a", name: "A" }, { id: "b", name: "B" }] };
    const reg = registryOf(defs);
    const done = at("w0", [["w0", 1]], { status: "completed" });
    const m = completionMessage(reg, done);
    expect(m.ok && m.text).toContain(`**Phases completed:** ${2 ** levels}`);
  });

  it("defect 10: documented template allowlists are exported, and refusals are plain data that keep their code", () => {
    for (const name of ["PROMPT_VARS", "BLOCK_REASON_VARS", "COMPLETION_VARS", "CANCELLED_VARS", "FAILED_VARS", "NOT_DONE_VARS", "INITIAL_MESSAGE_VARS"] as const) {
      expect(core[name]).toBeInstanceOf(FrozenSet);
    }
    const reg = registryOf({ w: { name: "W", phases: [{ id: "a", name: "A" }] } });
    const r = advance(reg, at("w", [["w", 0]], { status: "paused" }), ctx);
    if (r.ok) throw new Error("expected a refusal");
    const cloned = structuredClone(r);
    expect(cloned).toEqual(r);
    expect(cloned.ok === false && cloned.error.code).toBe("NOT_RUNNING");
    expect(core.isWorkflowError(cloned.ok === false ? cloned.error : null, "NOT_RUNNING")).toBe(true);
  });
});

describe("issue 9 API", () => {
  it("a misplaced argument is a typed refusal at run time (and a compile error)", () => {
    const reg = registryOf({ w: { name: "W", phases: [{ id: "a", name: "A", tools: { whitelist: ["read"] } }] } });
    const s = started(reg, "w");
    // @ts-expect-error state and registry swapped
    expect(code(advance(s, reg, ctx))).toBe("INVALID_REGISTRY");
    // @ts-expect-error state and registry swapped
    expect(code(checkTool(s, reg, "bash"))).toBe("INVALID_REGISTRY");
    // @ts-expect-error the old reduce order
    expect(code(reduce(s, { type: "advance" }, reg, ctx))).toBe("INVALID_REGISTRY");
  });

  it("start is an event: a journal replays from nothing; a second start is refused", () => {
    const reg = registryOf({ w: { name: "W", phases: [{ id: "a", name: "A" }, { id: "b", name: "B" }] } });
    const first = reduce(reg, null, { type: "start", workflowKey: "w", taskId: "t", taskDescription: "d" }, ctx);
    if (!first.ok) throw new Error(first.error.message);
    expect(code(reduce(reg, first.state, { type: "start", workflowKey: "w", taskId: "t", taskDescription: "d" }, ctx))).toBe("ALREADY_STARTED");
    expect(code(reduce(reg, null, { type: "advance" }, ctx))).toBe("NOT_RUNNING");
  });

  it("a clock that goes backwards is clamped: updatedAt never decreases and never falls below startedAt", () => {
    const reg = registryOf({ w: { name: "W", phases: [{ id: "a", name: "A" }, { id: "b", name: "B" }] } });
    const s = started(reg, "w", 10_000);
    const r = advance(reg, s, { now: 3 });
    expect(r.ok && r.state.updatedAt).toBe(10_000);
    const end = r.ok ? advance(reg, r.state, { now: 4 }) : r;
    expect(end.ok && [end.state.updatedAt, end.state.finishedAt]).toEqual([10_000, 10_000]);
  });

  it("every state core makes has one object shape (the same keys in the same order)", () => {
    const reg = registryOf({ w: { name: "W", phases: [{ id: "a", name: "A" }, { id: "b", name: "B" }] } });
    const s = started(reg, "w");
    const a = advance(reg, s, ctx);
    const c = a.ok ? advance(reg, a.state, ctx) : a;
    if (!a.ok || !c.ok) throw new Error("expected moves");
    expect(Object.keys(a.state)).toEqual(Object.keys(s));
    expect(Object.keys(c.state)).toEqual(Object.keys(s));
  });
});
