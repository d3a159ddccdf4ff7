/**
 * `restartScope` and the choices `checkDefinitions` offers, as a model: a run walks random nested definitions,
 * the definitions are replaced by a random edit (or lose the root workflow), and then:
 *  - every choice offered works: "restart-scope" restarts the run onto a position that resolves (checkDefinitions
 *    no longer refuses it), "cancel" cancels it; a finished run is never refused and offered nothing;
 *  - restartScope keeps the standing prefix of the path, puts its innermost level at phase 0 with references
 *    entered, counts 1 + entered steps, keeps the status, and is refused only without a root or a live run.
 * And the diff is by phase id: inserting a phase anywhere is one "added", whatever comes after it.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { WorkflowRegistry } from "../src/definitions/registry.js";
import { checkDefinitions } from "../src/policy/check-definitions.js";
import { phaseChanges } from "../src/policy/definitions-diff.js";
import { isLive, type WorkflowState } from "../src/state/schema.js";
import { reduce } from "../src/transitions/reduce.js";
import { restartScope, standingLevels } from "../src/transitions/restart-scope.js";
import { walkPath } from "../src/transitions/navigation.js";
import type { WorkflowEvent } from "../src/transitions/types.js";
import { registryOf, started, without } from "./helpers/core-fixtures.js";
import { buildDefinitions, workflowShape, type WorkflowShape } from "./helpers/model-definitions.js";

const NUM_RUNS = process.env.CI === "true" ? 1_000 : 200;

const moveArb: fc.Arbitrary<WorkflowEvent> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ type: "advance" } as const) },
  { weight: 2, arbitrary: fc.constant({ type: "loop" } as const) },
  { weight: 1, arbitrary: fc.constant({ type: "pause" } as const) },
  { weight: 1, arbitrary: fc.constant({ type: "resume" } as const) },
);
const editArb = (n: number): fc.Arbitrary<Array<WorkflowShape | null>> => fc.array(fc.option(workflowShape, { nil: null, freq: 2 }), { minLength: n, maxLength: n });

const seen = { restarted: 0, refusedNoRoot: 0, choicesChecked: 0, finished: 0 };

function checkRestart(registry: WorkflowRegistry, state: WorkflowState): void {
  const r = restartScope(registry, state, { now: 10_000 });
  if (!isLive(state)) {
    expect(r.ok ? "moved" : r.error.code).toBe("NOT_RUNNING");
    return;
  }
  const n = standingLevels(registry, state.currentPath);
  if (n === 0) {
    seen.refusedNoRoot += 1;
    expect(r.ok ? "moved" : r.error.code).toBe("MISSING_DEFINITION");
    return;
  }
  if (!r.ok) throw new Error(`restart refused a run with a standing root: ${r.error.message}`);
  seen.restarted += 1;
  const path = r.state.currentPath;
  expect(path.slice(0, n - 1)).toEqual(state.currentPath.slice(0, n - 1));
  expect(path[n - 1]).toMatchObject({ workflowKey: state.currentPath[n - 1]?.workflowKey, phaseIndex: 0 });
  expect(path.slice(n).every((seg) => seg.phaseIndex === 0)).toBe(true);
  expect(r.happened).toMatchObject({ type: "restarted-scope", dropped: state.currentPath.length - n, entered: path.slice(n).map((seg) => seg.workflowKey) });
  expect(r.state.globalStepCount).toBe(state.globalStepCount + 1 + (path.length - n));
  expect(r.state.status).toBe(state.status);
  expect(r.state.generation).toBe(state.generation + 1);
  expect(walkPath("t", registry, r.state).ok).toBe(true);
  const after = checkDefinitions(registry, r.state);
  expect(after.ok).toBe(true);
  if (registry.workflows.has(state.workflowKey)) expect(after).toMatchObject({ verdict: "unchanged" });
}

function checkChoices(registry: WorkflowRegistry, state: WorkflowState): void {
  const v = checkDefinitions(registry, state);
  if (!isLive(state)) {
    seen.finished += 1;
    expect(v.ok).toBe(true); // a finished run never moves again: nothing to choose
    return;
  }
  if (v.ok) return;
  expect(v.error.code).toBe("DEFINITIONS_CHANGED");
  const choices = v.error.details["choices"] as readonly string[];
  expect(choices).toContain("cancel");
  seen.choicesChecked += 1;
  for (const choice of choices) {
    const r = reduce(registry, state, { type: choice === "cancel" ? "cancel-now" : "restart-scope" }, { now: 10_001 });
    if (!r.ok) throw new Error(`the offered choice ${choice} was refused: ${r.error.message}`);
    if (choice === "cancel") expect(r.state.status).toBe("cancelled");
    else expect(checkDefinitions(registry, r.state).ok).toBe(true);
  }
}

describe("restart-scope and the choices of checkDefinitions (model)", () => {
  it(`every offered choice works; restartScope keeps the standing prefix and lands on a resolving phase (${NUM_RUNS} runs)`, () => {
    fc.assert(
      fc.property(
        fc.array(workflowShape, { minLength: 3, maxLength: 5 }).chain((shapes) => fc.tuple(fc.constant(shapes), editArb(shapes.length))),
        fc.array(moveArb, { maxLength: 14 }),
        fc.boolean(),
        fc.constantFrom(null, "cancel-now" as const, "fail" as const),
        ([shapes, edit], moves, dropRoot, end) => {
          let state = started(registryOf(buildDefinitions(shapes)), "w0");
          const before = registryOf(buildDefinitions(shapes));
          let now = 2_000;
          for (const event of moves) {
            const r = reduce(before, state, event, { now: (now += 1) });
            if (r.ok) state = r.state;
          }
          if (end !== null) {
            const r = reduce(before, state, end === "fail" ? { type: "fail", reason: "x" } : { type: "cancel-now" }, { now: (now += 1) });
            if (r.ok) state = r.state;
          }
          const edited = registryOf(buildDefinitions(shapes.map((s, i) => edit[i] ?? s)));
          const registry = dropRoot ? without(edited, "w0") : edited;
          checkRestart(registry, state);
          checkChoices(registry, state);
        },
      ),
      { numRuns: NUM_RUNS },
    );
    expect(seen.restarted).toBeGreaterThan(0);
    expect(seen.refusedNoRoot).toBeGreaterThan(0);
    expect(seen.choicesChecked).toBeGreaterThan(0);
    expect(seen.finished).toBeGreaterThan(0);
  });

  it("a finished run whose definitions changed is told so and offered nothing (cancel would be refused)", () => {
    const defs = { w: { name: "W", phases: [{ id: "a", name: "A" }, { id: "b", name: "B" }] } };
    const s = started(registryOf(defs), "w");
    const done = reduce(registryOf(defs), s, { type: "cancel-now" }, { now: 5 });
    if (!done.ok) throw new Error("cancel");
    const edited = registryOf({ w: { name: "W", phases: [{ id: "z", name: "Z" }] } });
    expect(checkDefinitions(edited, done.state)).toMatchObject({ ok: true, verdict: "changed" });
  });
});

describe("the diff is by phase id", () => {
  const phase = (id: string, name = id.toUpperCase()) => ({ id, name, emoji: "", instructions: "" });
  const ids = fc.uniqueArray(fc.string({ minLength: 1, maxLength: 6 }).filter((s) => s.trim() !== ""), { minLength: 1, maxLength: 12 });

  it("one insertion anywhere is one 'added' (the phases after it are not 'changed'); one removal is one 'removed'", () => {
    fc.assert(
      fc.property(ids, fc.string({ minLength: 1, maxLength: 6 }).filter((s) => s.trim() !== ""), fc.nat(), (list, fresh, at) => {
        fc.pre(!list.includes(fresh));
        const before = list.map((id) => phase(id));
        const i = at % (list.length + 1);
        const after = [...before.slice(0, i), phase(fresh), ...before.slice(i)];
        expect(phaseChanges(before, after)).toEqual([{ index: i, id: fresh, change: "added" }]);
        expect(phaseChanges(after, before)).toEqual([{ index: i, id: fresh, change: "removed" }]);
      }),
    );
  });

  it("a renamed phase is 'changed' at its id; a swap is a move; checkDefinitions says whether the run's position shifted", () => {
    expect(phaseChanges([phase("a"), phase("b")], [phase("a"), phase("b", "Bee")])).toEqual([{ index: 1, id: "b", change: "changed" }]);
    expect(phaseChanges([phase("a"), phase("b"), phase("c")], [phase("b"), phase("a"), phase("c")])).toEqual([{ index: 1, id: "a", change: "moved" }]);
    const old = registryOf({ w: { name: "W", phases: [phase("a"), phase("b"), phase("c")] } });
    const s = reduce(old, started(old, "w"), { type: "advance" }, { now: 3 });
    if (!s.ok) throw new Error("advance");
    const inserted = registryOf({ w: { name: "W", phases: [phase("new"), phase("a"), phase("b"), phase("c")] } });
    expect(checkDefinitions(inserted, s.state, old)).toEqual({
      ok: true,
      verdict: "changed",
      diff: [{ workflowKey: "w", change: "changed", phases: [{ index: 0, id: "new", change: "added" }] }],
      position: "shifted", // index 1 was "b", is "a" now: the run must not move there silently
    });
    const appended = registryOf({ w: { name: "W", phases: [phase("a"), phase("b"), phase("c"), phase("d")] } });
    expect(checkDefinitions(appended, s.state, old)).toMatchObject({ ok: true, position: "same", diff: [{ phases: [{ index: 3, id: "d", change: "added" }] }] });
  });
});
