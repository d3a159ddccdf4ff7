/**
 * `carryPosition` as a model: a run walks random nested definitions, every workflow is then edited by identity
 * (entries removed, new phases inserted, the rest shuffled), and the run is carried onto the edit. Whenever the
 * carry succeeds, the state validates (migrateState reads its persisted form back unchanged), resolves in the new
 * definitions, and every level of its path names the same entry (phase id, reference key) as before; it is
 * refused (DEFINITIONS_CHANGED) exactly when one of those entries is gone, and a finished run is never carried.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { WorkflowRegistry } from "../src/definitions/registry.js";
import type { PhaseEntry } from "../src/definitions/schema.js";
import { checkDefinitions } from "../src/policy/check-definitions.js";
import { migrateState } from "../src/state/migrate.js";
import { isLive, toPersisted, type WorkflowState } from "../src/state/schema.js";
import { carryPosition } from "../src/transitions/carry-position.js";
import { walkPath } from "../src/transitions/navigation.js";
import { reduce } from "../src/transitions/reduce.js";
import { resolveActive } from "../src/transitions/resolve-active.js";
import { reachableFingerprints } from "../src/transitions/start.js";
import type { WorkflowEvent } from "../src/transitions/types.js";
import { deep, registryOf, started } from "./helpers/core-fixtures.js";
import { buildDefinitions, workflowShape } from "./helpers/model-definitions.js";

const NUM_RUNS = process.env.CI === "true" ? 1_000 : 300;

const moveArb: fc.Arbitrary<WorkflowEvent> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ type: "advance" } as const) },
  { weight: 2, arbitrary: fc.constant({ type: "loop" } as const) },
  { weight: 1, arbitrary: fc.constant({ type: "pause" } as const) },
  { weight: 1, arbitrary: fc.constant({ type: "cancel-now" } as const) },
);

/** Per workflow: which entries to drop, how many new phases to insert where, and a shuffle. */
const editArb = fc.record({ drop: fc.array(fc.constantFrom(false, false, true), { maxLength: 6 }), insert: fc.array(fc.nat(6), { maxLength: 2 }), order: fc.array(fc.double({ noNaN: true }), { maxLength: 8 }) });

interface Edit {
  drop: boolean[];
  insert: number[];
  order: number[];
}
type Raw = Record<string, { phases: Array<Record<string, unknown>> } & Record<string, unknown>>;

function edited(raw: Raw, edits: Edit[]): Raw {
  const out: Raw = {};
  Object.entries(raw).forEach(([key, def], i) => {
    const e = edits[i % edits.length] as Edit;
    let phases = def.phases.filter((_, k) => e.drop[k] !== true);
    if (phases.length === 0) phases = [def.phases[0] as Record<string, unknown>];
    e.insert.forEach((at, j) => phases.splice(at % (phases.length + 1), 0, { id: `new${i}x${j}`, name: `New ${i}.${j}` }));
    const weight = (k: number): number => e.order[k] ?? k;
    phases = phases.map((p, k) => ({ p, w: weight(k) })).sort((a, b) => a.w - b.w).map((x) => x.p);
    out[key] = { ...def, phases };
  });
  return out;
}

const same = (a: PhaseEntry, b: PhaseEntry): boolean => ("subworkflow" in a ? "subworkflow" in b && a.subworkflow === b.subworkflow : !("subworkflow" in b) && a.id === b.id);

const seen = { carried: 0, shifted: 0, refused: 0, finished: 0 };

function check(pinned: WorkflowRegistry, next: WorkflowRegistry, state: WorkflowState): void {
  const r = carryPosition(next, state, pinned, { now: 50_000 });
  if (!isLive(state)) {
    seen.finished += 1;
    expect(r.ok ? "carried" : r.error.code).toBe("NOT_RUNNING");
    return;
  }
  const before = walkPath("t", pinned, state);
  if (!before.ok) throw new Error(before.error.message);
  const survives = before.levels.every((l) => next.workflows.get(l.key)?.phases.some((e) => same(e, l.entry)) === true);
  if (!survives) {
    seen.refused += 1;
    expect(r.ok ? "carried" : r.error.code).toBe("DEFINITIONS_CHANGED");
    return;
  }
  if (!r.ok) throw new Error(`carry refused a run whose entries all survive: ${r.error.message}`);
  seen.carried += 1;
  if (r.happened.type === "carried" && r.happened.shifted > 0) seen.shifted += 1;
  // The state validates: its persisted form reads back as itself.
  const read = migrateState(JSON.parse(JSON.stringify(toPersisted(r.state))));
  if (!read.ok) throw new Error(read.error.message);
  expect(read.state).toEqual(toPersisted(r.state));
  // It resolves in the new definitions, every level on the same entry, and nothing else about the run changed.
  const after = walkPath("t", next, r.state);
  if (!after.ok) throw new Error(after.error.message);
  expect(after.levels.map((l) => l.key)).toEqual(before.levels.map((l) => l.key));
  after.levels.forEach((l, d) => expect(same(l.entry, (before.levels[d] as { entry: PhaseEntry }).entry)).toBe(true));
  expect(resolveActive(next, r.state).ok).toBe(true);
  expect(r.state).toMatchObject({ status: state.status, globalStepCount: state.globalStepCount, loopCount: state.loopCount, generation: state.generation + 1, taskId: state.taskId });
  expect(r.state.currentPath.map((s) => s.loops)).toEqual(state.currentPath.map((s) => s.loops));
  expect(r.state.definitions).toEqual(reachableFingerprints(next, state.workflowKey));
  expect(checkDefinitions(next, r.state)).toMatchObject({ ok: true, verdict: "unchanged" });
}

describe("carryPosition (model)", () => {
  it(`a carried run validates, resolves and stays on the same phase ids; refused exactly when one is gone (${NUM_RUNS} runs)`, () => {
    fc.assert(
      fc.property(fc.array(workflowShape, { minLength: 3, maxLength: 5 }), fc.array(editArb, { minLength: 1, maxLength: 5 }), fc.array(moveArb, { maxLength: 14 }), (shapes, edits, moves) => {
        const raw = buildDefinitions(shapes) as Raw;
        const pinned = registryOf(raw);
        let state = started(pinned, "w0");
        let now = 2_000;
        for (const event of moves) {
          const r = reduce(pinned, state, event, { now: (now += 1) });
          if (r.ok) state = r.state;
        }
        check(pinned, registryOf(edited(raw, edits)), state);
      }),
      { numRuns: NUM_RUNS },
    );
    expect(seen.carried).toBeGreaterThan(0);
    expect(seen.shifted).toBeGreaterThan(0);
    expect(seen.refused).toBeGreaterThan(0);
    expect(seen.finished).toBeGreaterThan(0);
  });

  it("an inserted earlier phase keeps the run on its phase (its index moves); a removed current phase is refused by name", () => {
    const old = registryOf({ w: { name: "W", phases: [{ id: "a", name: "A" }, { id: "b", name: "B" }, { id: "c", name: "C" }] } });
    const s = reduce(old, started(old, "w"), { type: "advance" }, { now: 2_000 });
    if (!s.ok) throw new Error("advance");
    const inserted = registryOf({ w: { name: "W", phases: [{ id: "new", name: "New" }, { id: "a", name: "A" }, { id: "b", name: "B" }, { id: "c", name: "C" }] } });
    const r = carryPosition(inserted, s.state, old, { now: 3_000 });
    expect(r).toMatchObject({ ok: true, state: { currentPath: [{ workflowKey: "w", phaseIndex: 2 }] }, happened: { type: "carried", shifted: 1, to: { phaseId: "b" } } });
    const removed = registryOf({ w: { name: "W", phases: [{ id: "a", name: "A" }, { id: "c", name: "C" }] } });
    const g = carryPosition(removed, s.state, old, { now: 3_000 });
    expect(g.ok ? "carried" : [g.error.code, g.error.message]).toEqual(["DEFINITIONS_CHANGED", expect.stringContaining('phase "b" of workflow "w"')]);
  });

  it("a pinned argument that is not a compiled registry is INVALID_REGISTRY naming it", () => {
    const r = carryPosition(deep, started(deep, "outer"), {} as WorkflowRegistry, { now: 5_000 });
    expect(r.ok ? "carried" : [r.error.code, r.error.details.field]).toEqual(["INVALID_REGISTRY", "pinned"]);
  });
});
