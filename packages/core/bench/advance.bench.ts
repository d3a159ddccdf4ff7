/** `advance` on a 3-deep path against a hand-written spread-clone of the same move, measured in one run. */
import type { BenchSuite } from "../../../bench/harness.js";
import { medians } from "../../../bench/harness.js";
import { releaseRegistry } from "../../../examples/release-workflow.js";
import { advance } from "../src/transitions/advance.js";
import { STATE_SCHEMA_VERSION, type WorkflowState } from "../src/state/schema.js";

const registry = releaseRegistry();

function stateAt(path: Array<[string, number]>): WorkflowState {
  return {
    schemaVersion: STATE_SCHEMA_VERSION,
    workflowKey: "release",
    status: "running",
    currentPath: path.map(([workflowKey, phaseIndex]) => ({ workflowKey, phaseIndex, loops: 0 })),
    globalStepCount: 4,
    loopCount: 0,
    taskId: "bench",
    taskDescription: "bench",
    startedAt: 1,
    updatedAt: 1,
    generation: 3,
    completionNotified: false,
    cancelPending: false,
  };
}

/** The baseline: clone the three segments, bump the top index and the counters, nothing checked. */
function spreadClone(s: WorkflowState, now: number): WorkflowState {
  const [a, b, c] = s.currentPath as [WorkflowState["currentPath"][0], WorkflowState["currentPath"][0], WorkflowState["currentPath"][0]];
  return {
    ...s,
    currentPath: [{ ...a }, { ...b }, { ...c, phaseIndex: c.phaseIndex + 1 }],
    globalStepCount: s.globalStepCount + 1,
    generation: s.generation + 1,
    updatedAt: now,
  };
}

let sink: unknown;

export const suite: BenchSuite = {
  title: "core: advance",
  description: "Median per call of `advance` (checks the status, the clock, the definitions along the way; returns the happening) on the release example, against a bare spread-clone of the same move.",
  async run() {
    const threeDeep = stateAt([["release", 1], ["review", 1], ["security", 0]]);
    const popTwo = stateAt([["release", 1], ["review", 1], ["security", 1]]);
    const ctx = { now: 2 };
    const m = await medians({
      advance3: () => (sink = advance(registry, threeDeep, ctx)),
      clone3: () => (sink = spreadClone(threeDeep, 2)),
      advancePop: () => (sink = advance(registry, popTwo, ctx)),
    });
    void sink;
    return [
      { subject: "advance, next phase at depth 3", baseline: "spread-clone of 3 segments", subjectNs: m.advance3 ?? NaN, baselineNs: m.clone3 ?? NaN, goal: "≤ 3×" },
      { subject: "advance, leaving 2 sub-workflows", baseline: "spread-clone of 3 segments", subjectNs: m.advancePop ?? NaN, baselineNs: m.clone3 ?? NaN },
    ];
  },
};
