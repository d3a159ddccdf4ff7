import { describe, expect, it } from "vitest";
import { advance } from "../src/transitions/advance.js";
import { resolveActive, type ActiveWorkflow } from "../src/transitions/resolve-active.js";
import type { WorkflowState } from "../src/state/schema.js";
import { activeOf, at, deep, started, without } from "./helpers/core-fixtures.js";

function active(state: WorkflowState): ActiveWorkflow {
  return activeOf(deep, state);
}

const name = (ref: { phaseName: string } | null): string | null => ref?.phaseName ?? null;

describe("resolveActive", () => {
  it("resolves the concrete phase, the root and innermost definitions, and one breadcrumb item per level", () => {
    const a = active(at("outer", [["outer", 2], ["tail", 1], ["inner", 0]]));
    expect(a.phase.id).toBe("i1");
    expect(a.definition.name).toBe("Outer");
    expect(a.scope.name).toBe("Inner");
    expect(a.scopeKey).toBe("inner");
    expect(a.breadcrumb).toEqual([
      { workflowKey: "outer", workflowName: "Outer", entryName: "Tail", emoji: "", kind: "subworkflow", index: 2, total: 3, entered: true },
      { workflowKey: "tail", workflowName: "Tail", entryName: "Inner", emoji: "", kind: "subworkflow", index: 1, total: 2, entered: true },
      { workflowKey: "inner", workflowName: "Inner", entryName: "Inner One", emoji: "1️⃣", kind: "phase", index: 0, total: 2, entered: true },
    ]);
  });

  it("previous is the concrete phase before this one in order; next is where advance goes, at every depth", () => {
    const table: Array<[Array<[string, number]>, string | null, string | null]> = [
      [[["outer", 0], ["mid", 0], ["inner", 0]], null, "Inner Two"],
      [[["outer", 0], ["mid", 0], ["inner", 1]], "Inner One", "Middle Two"],
      [[["outer", 0], ["mid", 1]], "Inner Two", "Outer Two"],
      [[["outer", 1]], "Middle Two", "Tail One"],
      [[["outer", 2], ["tail", 0]], "Outer Two", "Inner One"],
      [[["outer", 2], ["tail", 1], ["inner", 0]], "Tail One", "Inner Two"],
      [[["outer", 2], ["tail", 1], ["inner", 1]], "Inner One", null],
    ];
    for (const [path, prev, next] of table) {
      const a = active(at("outer", path));
      expect([name(a.previousPhase), name(a.nextPhase)], JSON.stringify(path)).toEqual([prev, next]);
    }
  });

  it("next names exactly the phase advance moves to, along a whole run", () => {
    let s = started(deep, "outer");
    while (s.status === "running") {
      const predicted = active(s).nextPhase;
      const r = advance(deep, s, { now: 2 });
      if (!r.ok) throw r.error;
      s = r.state;
      if (s.status === "completed") expect(predicted).toBeNull();
      else expect(predicted?.phaseId).toBe(active(s).phase.id);
    }
  });

  it("a state resting on a reference is drilled: levels not yet entered, next is that same phase (advance only enters)", () => {
    const a = active(at("outer", [["outer", 0]]));
    expect(a.entry).toEqual({ subworkflow: "mid" });
    expect(a.phase.id).toBe("i1");
    expect(a.breadcrumb.map((b) => [b.workflowKey, b.entered])).toEqual([["outer", true], ["mid", false], ["inner", false]]);
    expect(a.nextPhase?.phaseId).toBe("i1");
    expect(a.previousPhase).toBeNull();
  });

  it("works for paused runs; a finished run has nothing to show (not an error)", () => {
    expect(active(at("flat", [["flat", 1]], { status: "paused" })).phase.id).toBe("f2");
    for (const status of ["completed", "cancelled", "failed"] as const) {
      expect(resolveActive(deep, at("flat", [["flat", 1]], { status }))).toEqual({ ok: true, active: null });
    }
  });

  it("a path that does not fit the definitions is a typed error naming the field", () => {
    const cases: Array<[WorkflowState, string, string]> = [
      [at("outer", [["outer", 0], ["tail", 0]]), "INVALID_PATH_INDEX", "currentPath[0].phaseIndex"],
      [at("outer", [["outer", 5]]), "INVALID_PATH_INDEX", "currentPath[0].phaseIndex"],
      [at("outer", [["flat", 0]]), "INVALID_STATE", "currentPath[0].workflowKey"],
      [at("ghost", [["ghost", 0]]), "MISSING_DEFINITION", "currentPath[0].workflowKey"],
    ];
    for (const [state, code, field] of cases) {
      const r = resolveActive(deep, state);
      if (r.ok) throw new Error(`expected ${code}`);
      expect([r.error.code, r.error.details.field]).toEqual([code, field]);
    }
    const r = resolveActive(without(deep, "tail"), at("outer", [["outer", 1]]));
    expect(r.ok || r.error.code).toBe("MISSING_DEFINITION");
  });
});
