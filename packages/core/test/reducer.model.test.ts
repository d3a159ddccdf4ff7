/**
 * Model test: random valid definitions (three or more levels, references at phase 0 and at the last position,
 * loopable or not, maxLoops) and random event sequences. Checks the reducer's invariants after every event.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { WorkflowRegistry } from "../src/definitions/registry.js";
import { migrateState } from "../src/state/migrate.js";
import { reduce } from "../src/transitions/reduce.js";
import { resolveActive } from "../src/transitions/resolve-active.js";
import { start } from "../src/transitions/start.js";
import { isFinished, STATE_SCHEMA_VERSION, toPersisted, type WorkflowState } from "../src/state/schema.js";
import type { WorkflowEvent } from "../src/transitions/types.js";
import { deepFreeze, registryOf } from "./helpers/core-fixtures.js";
import { buildDefinitions, workflowShape } from "./helpers/model-definitions.js";

const CI = process.env.CI === "true";
const NUM_RUNS = CI ? 1_000 : 100;
const ACTIONS = 50;

const eventArb: fc.Arbitrary<WorkflowEvent> = fc.oneof(
  { weight: 8, arbitrary: fc.constant({ type: "advance" } as const) },
  { weight: 3, arbitrary: fc.constant({ type: "loop" } as const) },
  { weight: 2, arbitrary: fc.constant({ type: "cancel" } as const) },
  { weight: 1, arbitrary: fc.constant({ type: "cancel-now" } as const) },
  { weight: 1, arbitrary: fc.constant({ type: "pause" } as const) },
  { weight: 1, arbitrary: fc.constant({ type: "resume" } as const) },
  { weight: 1, arbitrary: fc.constant({ type: "fail", reason: "boom" } as const) },
  { weight: 1, arbitrary: fc.constant({ type: "mark-notified" } as const) },
);

function fresh(registry: WorkflowRegistry, now: number): WorkflowState {
  const r = start(registry, { workflowKey: "w0", taskId: `t${now}`, taskDescription: "model" }, { now });
  if (!r.ok) throw new Error(r.error.message);
  return deepFreeze(r.state);
}

function checkRoundTrip(state: WorkflowState): void {
  const persisted = toPersisted(state);
  const back = migrateState(JSON.parse(JSON.stringify(persisted)));
  if (!back.ok) throw new Error(back.error.message);
  expect(back.state).toEqual(persisted);
}

function runScenario(registry: WorkflowRegistry, events: WorkflowEvent[]): void {
  let now = 1_000;
  let state = fresh(registry, now);
  checkRoundTrip(state);
  for (const event of events) {
    now += 1;
    if (isFinished(state) && event.type !== "mark-notified") {
      state = fresh(registry, now); // a finished run cannot move: start another one and keep exploring
      continue;
    }
    const before = structuredClone(state);
    const predicted = state.status === "running" && event.type === "advance" ? resolveActive(registry, state) : undefined;
    const outcome = reduce(registry, state, event, { now });
    expect(state).toEqual(before); // frozen too: a mutation would have thrown
    expect(structuredClone(outcome)).toEqual(outcome); // refusals are plain data
    const next = outcome.ok ? outcome.state : state; // a refusal changes nothing
    expect(next.schemaVersion).toBe(STATE_SCHEMA_VERSION);
    expect(next.globalStepCount).toBeGreaterThanOrEqual(state.globalStepCount);
    expect(next.generation).toBe(outcome.ok ? state.generation + 1 : state.generation);
    if (outcome.ok) expect(next.updatedAt).toBe(now);
    if (outcome.ok && event.type !== "cancel") expect(next.cancelPending).toBe(false);
    if (next.status === "running" || next.status === "paused") {
      const resolved = resolveActive(registry, next);
      if (!resolved.ok) throw new Error(resolved.error.message);
      if (predicted?.ok && predicted.active && outcome.ok) expect(resolved.active?.phase.id).toBe(predicted.active.nextPhase?.phaseId);
    } else if (predicted?.ok && predicted.active && outcome.ok && next.status === "completed") {
      expect(predicted.active.nextPhase).toBeNull();
    }
    checkRoundTrip(next);
    state = deepFreeze(next);
  }
}

describe("reducer model", () => {
  it(`holds its invariants over random definitions and ${ACTIONS}-event sequences (${NUM_RUNS} runs)`, () => {
    fc.assert(
      fc.property(fc.array(workflowShape, { minLength: 3, maxLength: 6 }), fc.array(eventArb, { minLength: ACTIONS, maxLength: ACTIONS }), (shapes, events) => {
        runScenario(registryOf(buildDefinitions(shapes)), events);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it("the generated definitions really nest three levels deep at start", () => {
    const registry = registryOf(buildDefinitions([
      { entries: ["phase"], loopable: true, maxLoops: undefined },
      { entries: ["phase"], loopable: true, maxLoops: undefined },
      { entries: ["phase"], loopable: true, maxLoops: undefined },
    ]));
    expect(fresh(registry, 1).currentPath.map((s) => s.workflowKey)).toEqual(["w0", "w1", "w2"]);
  });
});
