/**
 * Model test of definitions that change under a live run: a run walks random definitions, then the
 * definitions are replaced by a random edit of them (phases added, removed or swapped, references moved), and
 * the run goes on under the new registry. Invariant: no move on a path that does not resolve — whenever the
 * walker rejects the position, advance and loop refuse, checkTool refuses (never a silent allow) and
 * checkDefinitions refuses with DEFINITIONS_CHANGED; whenever it resolves, checkDefinitions lets the run
 * continue and its verdict matches the fingerprints.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { WorkflowRegistry } from "../src/definitions/registry.js";
import { checkDefinitions } from "../src/policy/check-definitions.js";
import { checkTool } from "../src/policy/check-tool.js";
import { isLive, type WorkflowState } from "../src/state/schema.js";
import { reduce } from "../src/transitions/reduce.js";
import { resolveActive } from "../src/transitions/resolve-active.js";
import type { WorkflowEvent } from "../src/transitions/types.js";
import { registryOf, started } from "./helpers/core-fixtures.js";
import { buildDefinitions, workflowShape, type WorkflowShape } from "./helpers/model-definitions.js";

const CI = process.env.CI === "true";
const NUM_RUNS = CI ? 1_000 : 150;

const moveArb: fc.Arbitrary<WorkflowEvent> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ type: "advance" } as const) },
  { weight: 2, arbitrary: fc.constant({ type: "loop" } as const) },
  { weight: 1, arbitrary: fc.constant({ type: "pause" } as const) },
  { weight: 1, arbitrary: fc.constant({ type: "resume" } as const) },
);

/** A random edit: each workflow kept, or replaced by a new random shape (which may drop or add phases). */
const editArb = (n: number): fc.Arbitrary<Array<WorkflowShape | null>> => fc.array(fc.option(workflowShape, { nil: null, freq: 2 }), { minLength: n, maxLength: n });

function step(registry: WorkflowRegistry, state: WorkflowState, event: WorkflowEvent, now: number): WorkflowState {
  const r = reduce(registry, state, event, { now });
  return r.ok ? r.state : state;
}

/** How often each branch of the invariant ran, so the test shows it reached unresolvable paths at all. */
const seen = { broken: 0, changed: 0, unchanged: 0 };

function checkInvariant(registry: WorkflowRegistry, state: WorkflowState, before: ReadonlyMap<string, string>): void {
  if (!isLive(state)) return;
  const resolved = resolveActive(registry, state);
  const verdict = checkDefinitions(registry, state);
  if (!resolved.ok) {
    seen.broken += 1;
    for (const type of ["advance", "loop"] as const) {
      const r = reduce(registry, state, { type }, { now: 9 });
      if (state.status === "running") expect(r.ok ? "moved" : r.error.code).toBe(resolved.error.code);
      else expect(r.ok).toBe(false);
    }
    if (state.status === "running") expect(checkTool(registry, state, "bash").ok).toBe(false);
    expect(verdict.ok ? verdict.verdict : verdict.error.code).toBe("DEFINITIONS_CHANGED");
    if (!verdict.ok) expect(verdict.error.details["choices"]).toEqual(["cancel", "restart-scope"]);
    return;
  }
  if (!verdict.ok) throw new Error(`a resolvable run was refused: ${verdict.error.message}`);
  const changed = Object.keys(state.definitions ?? {}).filter((k) => before.get(k) !== registry.fingerprints.get(k));
  expect(verdict.verdict).toBe(changed.length === 0 ? "unchanged" : "changed");
  seen[verdict.verdict === "changed" ? "changed" : "unchanged"] += 1;
  expect(verdict.diff.map((d) => d.workflowKey)).toEqual(changed.sort());
}

describe("definitions changing under a live run (model)", () => {
  it(`never moves on an unresolvable path, and the verdict matches (${NUM_RUNS} runs)`, () => {
    fc.assert(
      fc.property(
        fc.array(workflowShape, { minLength: 3, maxLength: 5 }).chain((shapes) => fc.tuple(fc.constant(shapes), editArb(shapes.length))),
        fc.array(moveArb, { maxLength: 12 }),
        fc.array(moveArb, { maxLength: 12 }),
        ([shapes, edit], before, after) => {
          const oldRegistry = registryOf(buildDefinitions(shapes));
          let state = started(oldRegistry, "w0");
          let now = 2_000;
          for (const event of before) state = step(oldRegistry, state, event, (now += 1));
          const edited = shapes.map((s, i) => edit[i] ?? s);
          const newRegistry = registryOf(buildDefinitions(edited));
          const recorded = new Map(Object.entries(state.definitions ?? {}));
          if (edit.every((e) => e === null)) expect(checkDefinitions(newRegistry, state)).toMatchObject({ ok: true, verdict: "unchanged" });
          checkInvariant(newRegistry, state, recorded);
          for (const event of after) {
            state = step(newRegistry, state, event, (now += 1));
            checkInvariant(newRegistry, state, recorded);
          }
        },
      ),
      { numRuns: NUM_RUNS },
    );
    expect(seen.broken).toBeGreaterThan(0);
    expect(seen.changed).toBeGreaterThan(0);
    expect(seen.unchanged).toBeGreaterThan(0);
  });

  it("a renamed phase marks its workflow changed; the run continues when its position still resolves", () => {
    const defs = { w: { name: "W", phases: [{ id: "a", name: "A" }, { id: "b", name: "B" }] } };
    const s = started(registryOf(defs), "w");
    const edited = registryOf({ w: { name: "W", phases: [{ id: "a", name: "A" }, { id: "b", name: "B renamed" }, { id: "c", name: "C" }] } });
    expect(checkDefinitions(edited, s)).toEqual({
      ok: true,
      verdict: "changed",
      // One fingerprint per workflow (state v3, issue 18): which phases changed needs the definitions the run
      // started with, not their hash, so the state no longer carries a per-position diff.
      diff: [{ workflowKey: "w", change: "changed", phases: [] }],
    });
    const shrunk = registryOf({ w: { name: "W", phases: [{ id: "z", name: "Z" }] } });
    const at1 = reduce(shrunk, s, { type: "advance" }, { now: 2 });
    expect(at1.ok).toBe(true); // position 0 still resolves: advancing completes the shorter workflow
    const moved = reduce(registryOf(defs), s, { type: "advance" }, { now: 2 });
    if (!moved.ok) throw new Error(moved.error.message);
    const verdict = checkDefinitions(shrunk, moved.state);
    expect(verdict.ok ? verdict.verdict : verdict.error.code).toBe("DEFINITIONS_CHANGED");
  });
});
