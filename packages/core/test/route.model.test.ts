/**
 * Issue 21: `route` (a gate's "no" sends the run to onFail / onReject) as a core transition. Model test over random
 * nested definitions whose phases carry random routes inside their own workflow, and random event sequences:
 * a route lands exactly on the phase the left phase's gate names, stays in its scope, counts as one loop of that
 * scope, is refused (changing nothing) exactly when no route is declared or the scope's maxLoops is reached.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as core from "@phasekit/core";
import { isFinished, type WorkflowState } from "../src/state/schema.js";
import type { WorkflowEvent } from "../src/transitions/types.js";
import { deepFreeze, registryOf } from "./helpers/core-fixtures.js";
import { buildDefinitions, workflowShape } from "./helpers/model-definitions.js";

const NUM_RUNS = process.env.CI === "true" ? 500 : 100;

/** Per concrete phase (by order of appearance): onFail / onReject as an index into its workflow's phases, or none. */
const routesArb = fc.array(fc.record({ fail: fc.option(fc.nat(5), { nil: undefined }), reject: fc.option(fc.nat(5), { nil: undefined }) }), { minLength: 30, maxLength: 30 });

type Phase = { id?: string; subworkflow?: string; gates?: Record<string, unknown> };

/** The generated definitions with routes added: targets are concrete phases of the same workflow (as compile demands). */
function withRoutes(defs: Record<string, unknown>, routes: Array<{ fail: number | undefined; reject: number | undefined }>): Record<string, unknown> {
  let n = 0;
  for (const def of Object.values(defs) as Array<{ phases: Phase[] }>) {
    const ids = def.phases.flatMap((p) => (p.id === undefined ? [] : [p.id]));
    for (const phase of def.phases) {
      if (phase.id === undefined) continue;
      const r = routes[n++ % routes.length] ?? { fail: undefined, reject: undefined };
      const gates: Record<string, unknown> = {};
      if (r.fail !== undefined) Object.assign(gates, { verify: { commands: ["true"] }, onFail: ids[r.fail % ids.length] });
      if (r.reject !== undefined) Object.assign(gates, { approve: { prompt: "ok?" }, onReject: ids[r.reject % ids.length] });
      if (Object.keys(gates).length > 0) phase.gates = gates;
    }
  }
  return defs;
}

const eventArb: fc.Arbitrary<WorkflowEvent> = fc.oneof(
  { weight: 5, arbitrary: fc.constant({ type: "advance" } as const) },
  { weight: 4, arbitrary: fc.constant({ type: "route", on: "fail" } as const) },
  { weight: 4, arbitrary: fc.constant({ type: "route", on: "reject" } as const) },
  { weight: 1, arbitrary: fc.constant({ type: "loop" } as const) },
  { weight: 1, arbitrary: fc.constant({ type: "pause" } as const) },
  { weight: 1, arbitrary: fc.constant({ type: "resume" } as const) },
);

function fresh(registry: core.WorkflowRegistry, now: number): WorkflowState {
  const r = core.start(registry, { workflowKey: "w0", taskId: `t${now}`, taskDescription: "model" }, { now });
  if (!r.ok) throw new Error(r.error.message);
  return deepFreeze(r.state);
}

/** Routes taken over a property run: the model must reach the successful case, not only refusals. */
let taken = 0;

function checkRoute(registry: core.WorkflowRegistry, state: WorkflowState, on: "fail" | "reject", now: number): WorkflowState {
  const before = structuredClone(state);
  const outcome = core.reduce(registry, state, { type: "route", on }, { now });
  expect(state).toEqual(before);
  const resolved = core.resolveActive(registry, state);
  if (!resolved.ok) throw new Error(resolved.error.message);
  const a = resolved.active;
  if (a === null || state.status !== "running") {
    expect(outcome.ok).toBe(false);
    return state;
  }
  const top = state.currentPath[state.currentPath.length - 1] as core.PathSegment;
  const restsOnRef = "subworkflow" in a.entry;
  const target = restsOnRef ? undefined : (a.phase.gates?.[on === "fail" ? "onFail" : "onReject"] as string | undefined);
  const maxLoops = registry.workflows.get(top.workflowKey)?.maxLoops;
  if (target === undefined) {
    expect(outcome.ok ? "ok" : outcome.error.code).toBe("NO_ROUTE");
    return state;
  }
  if (maxLoops !== undefined && top.loops >= maxLoops) {
    expect(outcome.ok ? "ok" : outcome.error.code).toBe("MAX_LOOPS_REACHED");
    return state;
  }
  if (!outcome.ok) throw new Error(`route refused: ${outcome.error.message}`);
  taken++;
  const next = outcome.state;
  // Same scope: every level above the top is untouched; the top names the target, one loop more.
  expect(next.currentPath.slice(0, -1)).toEqual(state.currentPath.slice(0, -1));
  const newTop = next.currentPath[next.currentPath.length - 1] as core.PathSegment;
  expect(newTop.workflowKey).toBe(top.workflowKey);
  expect(newTop.loops).toBe(top.loops + 1);
  expect(next.loopCount).toBe(state.loopCount + 1);
  expect(next.globalStepCount).toBe(state.globalStepCount + 1);
  expect(next.generation).toBe(state.generation + 1);
  const after = core.resolveActive(registry, next);
  if (!after.ok || after.active === null) throw new Error("a routed run does not resolve");
  expect(after.active.phase.id).toBe(target);
  expect(outcome.happened).toMatchObject({ type: "routed", on, workflowKey: top.workflowKey, from: { phaseId: a.phase.id }, to: { phaseId: target } });
  // The state persists and reads back unchanged (one schema, one migration path).
  const p = core.toPersisted(next);
  if (!p.ok) throw new Error(p.error.message);
  const back = core.migrateState(JSON.parse(JSON.stringify(p.state)));
  expect(back.ok && back.state).toEqual(p.state);
  return deepFreeze(next);
}

describe("route model", () => {
  it(`routes exactly where the gate says, within its scope and its loop limit (${NUM_RUNS} runs)`, () => {
    fc.assert(
      fc.property(fc.array(workflowShape, { minLength: 3, maxLength: 5 }), routesArb, fc.array(eventArb, { minLength: 40, maxLength: 40 }), (shapes, routes, events) => {
        const registry = registryOf(withRoutes(buildDefinitions(shapes), routes));
        let now = 1_000;
        let state = fresh(registry, now);
        for (const event of events) {
          now += 1;
          if (isFinished(state)) {
            state = fresh(registry, now);
            continue;
          }
          if (event.type === "route") {
            state = checkRoute(registry, state, event.on, now);
            continue;
          }
          const r = core.reduce(registry, state, event, { now });
          if (r.ok) state = deepFreeze(r.state);
        }
      }),
      { numRuns: NUM_RUNS },
    );
    expect(taken).toBeGreaterThan(NUM_RUNS);
  });

  it("a route back and forth ends at maxLoops: every route counts against the scope's limit (terminates)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 6 }), (maxLoops) => {
        const registry = registryOf({
          rel: {
            name: "Rel",
            maxLoops,
            phases: [
              { id: "build", name: "Build" },
              { id: "test", name: "Test", gates: { verify: { commands: ["npm test"] }, onFail: "build" } },
            ],
          },
        });
        const s = core.start(registry, { workflowKey: "rel", taskId: "t", taskDescription: "d" }, { now: 1 });
        if (!s.ok) throw new Error(s.error.message);
        let state = s.state;
        let routed = 0;
        for (let i = 0; i < 20; i++) {
          const adv = core.advance(registry, state, { now: 2 });
          if (!adv.ok) throw new Error(adv.error.message);
          const r = core.route(registry, adv.state, "fail", { now: 3 });
          if (!r.ok) {
            expect(r.error.code).toBe("MAX_LOOPS_REACHED");
            expect(r.error.message).toContain('onFail "build" is not taken again');
            break;
          }
          routed++;
          state = r.state;
        }
        expect(routed).toBe(maxLoops);
      }),
    );
  });

  it("refuses a bad `on`, a paused run, and a phase without the route; the result line says why the run went back", () => {
    const registry = registryOf({ rel: { name: "Rel", phases: [{ id: "build", name: "Build" }, { id: "ship", name: "Ship", emoji: "🚀", gates: { approve: { prompt: "ok?" }, onReject: "build" } }] } });
    const s = core.start(registry, { workflowKey: "rel", taskId: "t", taskDescription: "d" }, { now: 1 });
    if (!s.ok) throw new Error(s.error.message);
    const noRoute = core.route(registry, s.state, "reject", { now: 2 });
    expect(!noRoute.ok && noRoute.error).toMatchObject({ code: "NO_ROUTE", details: { field: "gates.onReject" } });
    expect(!noRoute.ok && noRoute.error.message).toContain('phase "build" of workflow "rel" declares no gates.onReject');
    const bad = core.route(registry, s.state, "maybe" as never, { now: 2 });
    expect(!bad.ok && bad.error.code).toBe("INVALID_OPTIONS");
    const atShip = core.advance(registry, s.state, { now: 2 });
    if (!atShip.ok) throw new Error(atShip.error.message);
    expect(core.route(registry, atShip.state, "fail", { now: 3 })).toMatchObject({ ok: false, error: { code: "NO_ROUTE" } });
    const paused = core.pause(registry, atShip.state, { now: 3 });
    if (!paused.ok) throw new Error(paused.error.message);
    expect(core.route(registry, paused.state, "reject", { now: 4 })).toMatchObject({ ok: false, error: { code: "NOT_RUNNING" } });
    const back = core.route(registry, atShip.state, "reject", { now: 4 });
    if (!back.ok) throw new Error(back.error.message);
    const active = core.resolveActive(registry, back.state);
    if (!active.ok || active.active === null) throw new Error("does not resolve");
    const line = core.stepResultLine(back.happened, "🚀 Ship", active.active.phase === undefined ? null : { workflowKey: "rel", phaseId: "build", phaseName: "Build", emoji: "", depth: 1 }, active.active.nextPhase, "Rel");
    expect(line.ok && line.text).toBe("↩ 🚀 Ship → Build: its approval was rejected, so the workflow sends the run back (then 🚀 Ship)");
  });
});
