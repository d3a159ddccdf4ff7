/**
 * A realistic walk through the release example, 3 levels deep: start in Build, enter Code Review and then
 * Security Audit, loop Security once, leave both sub-workflows at once, publish and complete — seven moves,
 * none repeated. The same walk on three engines, interleaved round by round (bench/harness.ts `interleavedSync`):
 * phasekit `advance`/`loop`, pi-workflows 1.0.0 `advancePhase`/`loopPhase` on the same definitions, and
 * xstate 5 `transition()` on an equivalent machine (nested compound states, the loop as a transition to the
 * scope's initial state). pi-workflows and xstate are dev dependencies of the benchmark only.
 */
import { createMachine, getInitialSnapshot, transition } from "xstate";
import type { BenchSuite } from "../../../bench/harness.js";
import { interleavedSync } from "../../../bench/harness.js";
import { releaseDefinitions, releaseRegistry } from "../../../examples/release-workflow.js";
import { advance } from "../src/transitions/advance.js";
import { loop } from "../src/transitions/loop.js";
import { start } from "../src/transitions/start.js";
import type { WorkflowState } from "../src/state/schema.js";

type Move = "next" | "loop";
const WALK: readonly Move[] = ["next", "next", "next", "loop", "next", "next", "next"];

const registry = releaseRegistry();
const ctx = { now: 1_000 };

function phasekitWalk(s0: WorkflowState): unknown {
  let s = s0;
  for (const move of WALK) {
    const r = move === "next" ? advance(registry, s, ctx) : loop(registry, s, ctx);
    if (!r.ok) throw new Error(r.error.message);
    s = r.state;
  }
  return s;
}

interface PiState {
  currentPath: Array<{ workflowKey: string; phaseIndex: number }>;
  [k: string]: unknown;
}
interface PiState_ {
  advancePhase(s: PiState, d: Record<string, unknown>): { newState: PiState };
  loopPhase(s: PiState, d: Record<string, unknown>): { looped: boolean; newState?: PiState };
}

/** pi-workflows' in-memory definitions: references are `{ subworkflow: true, workflowKey, resolved }`. */
function piDefinitions(): Record<string, { phases: unknown[]; [k: string]: unknown }> {
  const defs: Record<string, { phases: unknown[]; [k: string]: unknown }> = {};
  for (const [key, def] of Object.entries(releaseDefinitions)) {
    defs[key] = { ...def, commandName: key, initialMessage: "go", phases: def.phases.map((p) => ({ ...p })) };
  }
  for (const def of Object.values(defs)) {
    def.phases = def.phases.map((p) => {
      const ref = (p as { subworkflow?: string }).subworkflow;
      return ref === undefined ? p : { subworkflow: true, workflowKey: ref, resolved: defs[ref] };
    });
  }
  return defs;
}

const machine = createMachine({
  id: "release",
  initial: "build",
  states: {
    build: { on: { NEXT: "review" } },
    review: {
      initial: "staticAnalysis",
      on: { LOOP: ".staticAnalysis" },
      states: {
        staticAnalysis: { on: { NEXT: "security" } },
        security: {
          initial: "threatModel",
          on: { LOOP: ".threatModel" },
          states: {
            threatModel: { on: { NEXT: "dependencyAudit" } },
            dependencyAudit: { on: { NEXT: "#release.publish" } },
          },
        },
      },
    },
    publish: { on: { NEXT: "done" } },
    done: { type: "final" },
  },
});

let sink: unknown;

export const suite: BenchSuite = {
  title: "core: a realistic walk (advance and loop) against pi-workflows 1.0.0 and xstate 5",
  description:
    "Seven moves on the release example (3 levels: into Code Review and Security Audit, one loop, out of both at once, publish, complete), the whole walk per call, interleaved round by round; the ratio is the median of per-round ratios.",
  async run() {
    const PI_STATE: string = "../../../node_modules/@harms-haus/pi-workflows/src/state.ts";
    const pi = (await import(PI_STATE)) as PiState_;
    const defs = piDefinitions();
    const started = start(registry, { workflowKey: "release", taskId: "bench", taskDescription: "bench" }, ctx);
    if (!started.ok) throw new Error(started.error.message);
    const s0 = started.state;
    const pi0: PiState = { active: true, workflowKey: "release", currentPath: [{ workflowKey: "release", phaseIndex: 0 }], globalStepCount: 0, taskId: "bench", taskDescription: "bench", startedAt: 1_000, completionNotified: false, cancelled: false };
    const piWalk = (): unknown => {
      let s = pi0;
      for (const move of WALK) s = move === "next" ? pi.advancePhase(s, defs).newState : (pi.loopPhase(s, defs).newState as PiState);
      return s;
    };
    const x0 = getInitialSnapshot(machine);
    const xWalk = (): unknown => {
      let s = x0;
      for (const move of WALK) [s] = transition(machine, s, { type: move === "next" ? "NEXT" : "LOOP" });
      return s;
    };
    // The three engines agree on where the walk ends (completed / inactive / final).
    const end = phasekitWalk(s0) as WorkflowState;
    const piEnd = piWalk() as { active: boolean };
    const xEnd = xWalk() as { status: string };
    if (end.status !== "completed" || piEnd.active || xEnd.status !== "done") throw new Error("the walks disagree on the end");
    const m = interleavedSync({ phasekit: () => (sink = phasekitWalk(s0)), pi: () => (sink = piWalk()), xstate: () => (sink = xWalk()) }, { rounds: 300, batch: 100 });
    void sink;
    return [
      { subject: "phasekit advance/loop, 7-move walk", baseline: "pi-workflows 1.0.0 advancePhase/loopPhase", subjectNs: m.ns["phasekit"] ?? NaN, baselineNs: m.ns["pi"] ?? NaN, ratio: m.ratio("phasekit", "pi"), goal: "≤ 1.0×" },
      { subject: "phasekit advance/loop, 7-move walk", baseline: "xstate 5 transition()", subjectNs: m.ns["phasekit"] ?? NaN, baselineNs: m.ns["xstate"] ?? NaN, ratio: m.ratio("phasekit", "xstate"), goal: "≤ 0.05× (≥ 20× faster)" },
    ];
  },
};
