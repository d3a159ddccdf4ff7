import { describe, expect, it } from "vitest";
import { advance } from "../src/transitions/advance.js";
import { cancel, cancelNow } from "../src/transitions/cancel.js";
import { fail, markCompletionNotified, pause, resume } from "../src/transitions/lifecycle.js";
import { loop } from "../src/transitions/loop.js";
import { reduce } from "../src/transitions/reduce.js";
import { start } from "../src/transitions/start.js";
import type { TransitionOutcome, WorkflowEvent } from "../src/transitions/types.js";
import { STATE_SCHEMA_VERSION } from "../src/state/schema.js";
import { at, deep, deepFreeze, pathOf, started, without } from "./helpers/core-fixtures.js";

const ctx = { now: 2_000 };

function ok(outcome: TransitionOutcome): Extract<TransitionOutcome, { ok: true }> {
  if (!outcome.ok) throw new Error(`expected success, got ${outcome.error.message}`);
  return outcome;
}

function refused(outcome: TransitionOutcome, code: string): void {
  if (outcome.ok) throw new Error(`expected refusal ${code}, got ${outcome.happened.type}`);
  expect(outcome.error.code).toBe(code);
  expect(outcome.error.message).toMatch(/^\[phasekit\] \[\w+\] /);
  // Refusals are plain data: they keep their code through structuredClone and JSON.
  expect(structuredClone(outcome.error)).toEqual(outcome.error);
  expect(Object.getPrototypeOf(outcome.error)).toBe(Object.prototype);
}

describe("start", () => {
  it("enters references at phase 0 at once, one step per sub-workflow entered", () => {
    const r = start(deep, { workflowKey: "outer", taskId: "t", taskDescription: "d" }, { now: 5 });
    if (!r.ok) throw new Error(r.error.message);
    expect(pathOf(r.state)).toBe("outer:0/mid:0/inner:0");
    expect(r.state.globalStepCount).toBe(2);
    expect(r.state).toMatchObject({ status: "running", generation: 0, startedAt: 5, updatedAt: 5, cancelPending: false, schemaVersion: STATE_SCHEMA_VERSION });
    expect(r.happened).toEqual({ type: "started", workflowKey: "outer", entered: ["mid", "inner"], to: { workflowKey: "inner", phaseId: "i1", phaseName: "Inner One", emoji: "1️⃣", depth: 3 } });
  });

  it("refuses an unknown workflow, an empty task id and a bad clock with typed errors", () => {
    const unknown = start(deep, { workflowKey: "nope", taskId: "t", taskDescription: "" }, ctx);
    expect(unknown.ok || unknown.error.code).toBe("UNKNOWN_WORKFLOW");
    const noId = start(deep, { workflowKey: "flat", taskId: "", taskDescription: "" }, ctx);
    expect(noId.ok || noId.error.code).toBe("INVALID_OPTIONS");
    const clock = start(deep, { workflowKey: "flat", taskId: "t", taskDescription: "" }, { now: 1.5 });
    expect(clock.ok || clock.error.code).toBe("INVALID_OPTIONS");
  });

  it("refuses when a workflow it must enter at once is missing", () => {
    const r = start(without(deep, "inner"), { workflowKey: "outer", taskId: "t", taskDescription: "" }, ctx);
    expect(r.ok || r.error.code).toBe("MISSING_DEFINITION");
  });
});

describe("advance: the four cases", () => {
  it("case 2: the next phase of the same scope, one step", () => {
    const s = started(deep, "outer");
    const r = ok(advance(deep, s, ctx));
    expect(pathOf(r.state)).toBe("outer:0/mid:0/inner:1");
    expect(r.state.globalStepCount).toBe(s.globalStepCount + 1);
    expect(r.happened).toMatchObject({ type: "advanced", advanceCase: 2, from: { phaseId: "i1" }, to: { phaseId: "i2", depth: 3 }, entered: [] });
  });

  it("case 2 into a reference: the reference is entered at once and each entry counts a step", () => {
    const s = at("outer", [["outer", 1]]);
    const r = ok(advance(deep, s, ctx));
    expect(pathOf(r.state)).toBe("outer:2/tail:0");
    expect(r.state.globalStepCount).toBe(12);
    expect(r.happened).toMatchObject({ type: "advanced", entered: ["tail"], to: { phaseId: "t1", workflowKey: "tail" } });
  });

  it("case 1: a migrated state resting on a reference enters it, down to a concrete phase", () => {
    const s = at("outer", [["outer", 0]]);
    const r = ok(advance(deep, s, ctx));
    expect(pathOf(r.state)).toBe("outer:0/mid:0/inner:0");
    expect(r.state.globalStepCount).toBe(12);
    expect(r.happened).toMatchObject({ type: "entered-subworkflow", advanceCase: 1, entered: ["mid", "inner"], to: { phaseId: "i1" } });
  });

  it("case 3: the last phase of the root completes the run", () => {
    const s = at("flat", [["flat", 1]]);
    const r = ok(advance(deep, s, { now: 9_000 }));
    expect(r.state).toMatchObject({ status: "completed", finishedAt: 9_000, updatedAt: 9_000, completionNotified: false, globalStepCount: 11, generation: 6 });
    expect(r.happened).toMatchObject({ type: "completed", advanceCase: 3, exited: [] });
  });

  it("case 4: the last phase of a sub-workflow pops it and moves the parent on", () => {
    const s = at("outer", [["outer", 0], ["mid", 0], ["inner", 1]]);
    const r = ok(advance(deep, s, ctx));
    expect(pathOf(r.state)).toBe("outer:0/mid:1");
    expect(r.state.globalStepCount).toBe(11);
    expect(r.happened).toMatchObject({ type: "exited-subworkflow", advanceCase: 4, exited: ["inner"], entered: [], to: { phaseId: "m2", depth: 2 } });
  });

  it("case 4 repeated: every finished parent is popped too, then the next parent entry is entered", () => {
    const s = at("outer", [["outer", 0], ["mid", 1]]);
    const r = ok(advance(deep, s, ctx));
    expect(pathOf(r.state)).toBe("outer:1");
    expect(r.happened).toMatchObject({ exited: ["mid"], to: { phaseId: "o2", depth: 1 } });
  });

  it("case 4 with a reference as the LAST entry at several levels completes the run from depth 3", () => {
    const s = at("outer", [["outer", 2], ["tail", 1], ["inner", 1]]);
    const r = ok(advance(deep, s, ctx));
    expect(r.state.status).toBe("completed");
    expect(r.state.globalStepCount).toBe(11);
    expect(r.happened).toMatchObject({ type: "completed", advanceCase: 4, exited: ["inner", "tail"], from: { phaseId: "i2" } });
  });

  it("walks the whole deep workflow from start to completion with the expected paths and steps", () => {
    let s = started(deep, "outer");
    const seen = [`${pathOf(s)}#${s.globalStepCount}`];
    while (s.status === "running") {
      s = ok(advance(deep, s, ctx)).state;
      seen.push(`${pathOf(s)}#${s.globalStepCount}`);
    }
    expect(seen).toEqual([
      "outer:0/mid:0/inner:0#2",
      "outer:0/mid:0/inner:1#3",
      "outer:0/mid:1#4",
      "outer:1#5",
      "outer:2/tail:0#7",
      "outer:2/tail:1/inner:0#9",
      "outer:2/tail:1/inner:1#10",
      "outer:2/tail:1/inner:1#11",
    ]);
    expect(s.status).toBe("completed");
  });

  it("a missing definition or an index out of range is a typed refusal, never completion", () => {
    const s = at("outer", [["outer", 1]]);
    refused(advance(without(deep, "tail"), s, ctx), "MISSING_DEFINITION");
    const out = at("flat", [["flat", 7]]);
    refused(advance(deep, out, ctx), "INVALID_PATH_INDEX");
    const popInto = at("outer", [["outer", 9], ["inner", 1]]);
    refused(advance(deep, popInto, ctx), "INVALID_PATH_INDEX");
  });

  it("refuses when not running", () => {
    for (const status of ["paused", "completed", "cancelled", "failed"] as const) {
      const s = at("flat", [["flat", 0]], { status });
      refused(advance(deep, s, ctx), "NOT_RUNNING");
    }
  });
});

describe("loop", () => {
  it("restarts the innermost scope, counts the loop per scope instance and refuses past maxLoops", () => {
    const s = at("outer", [["outer", 0], ["mid", 0], ["inner", 1]]);
    const r = ok(loop(deep, s, ctx));
    expect(pathOf(r.state)).toBe("outer:0/mid:0/inner:0(1)");
    expect(r.state).toMatchObject({ globalStepCount: 11, loopCount: 1 });
    expect(r.happened).toMatchObject({ type: "looped", workflowKey: "inner", loops: 1, maxLoops: 1, to: { phaseId: "i1" } });
    const again = loop(deep, r.state, ctx);
    refused(again, "MAX_LOOPS_REACHED");
  });

  it("a new instance of the scope may loop again", () => {
    const looped = at("outer", [["outer", 0], ["mid", 0], ["inner", 1, 1]]);
    const inTail = ok(advance(deep, ok(advance(deep, ok(advance(deep, ok(advance(deep, looped, ctx)).state, ctx)).state, ctx)).state, ctx)).state;
    expect(pathOf(inTail)).toBe("outer:2/tail:1/inner:0");
    expect(ok(loop(deep, inTail, ctx)).happened).toMatchObject({ loops: 1 });
  });

  it("re-enters a reference at phase 0 at once", () => {
    const s = at("outer", [["outer", 0], ["mid", 1]]);
    const r = ok(loop(deep, s, ctx));
    expect(pathOf(r.state)).toBe("outer:0/mid:0(1)/inner:0");
    expect(r.state.globalStepCount).toBe(12);
    expect(r.happened).toMatchObject({ entered: ["inner"], to: { phaseId: "i1", depth: 3 } });
  });

  it("refuses NOT_LOOPABLE, and NOT_RUNNING when paused", () => {
    refused(loop(deep, at("flat", [["flat", 1]]), ctx), "NOT_LOOPABLE");
    refused(loop(deep, at("flat", [["flat", 1]], { status: "paused" }), ctx), "NOT_RUNNING");
  });
});

describe("cancel", () => {
  it("the first call arms, a second confirms", () => {
    const s = started(deep, "flat");
    const armed = ok(cancel(deep, s, ctx));
    expect(armed.happened).toEqual({ type: "cancel-armed" });
    expect(armed.state).toMatchObject({ cancelPending: true, status: "running", generation: 1 });
    const done = ok(cancel(deep, armed.state, { now: 3_000 }));
    expect(done.happened).toEqual({ type: "cancelled", via: "confirm" });
    expect(done.state).toMatchObject({ status: "cancelled", cancelPending: false, finishedAt: 3_000, generation: 2, completionNotified: false });
  });

  it("any other accepted action disarms it; a refused one changes nothing", () => {
    const armed = ok(cancel(deep, started(deep, "flat"), ctx)).state;
    const moved = ok(advance(deep, armed, ctx)).state;
    expect(moved.cancelPending).toBe(false);
    expect(ok(cancel(deep, moved, ctx)).happened.type).toBe("cancel-armed");
    refused(loop(deep, armed, ctx), "NOT_LOOPABLE");
    expect(armed.cancelPending).toBe(true);
  });

  it("cancelNow cancels at once, also a paused run; finished runs refuse both", () => {
    const paused = at("flat", [["flat", 0]], { status: "paused" });
    expect(ok(cancelNow(deep, paused, ctx)).state.status).toBe("cancelled");
    expect(ok(cancel(deep, paused, ctx)).state.cancelPending).toBe(true);
    const done = at("flat", [["flat", 1]], { status: "completed" });
    refused(cancel(deep, done, ctx), "NOT_RUNNING");
    refused(cancelNow(deep, done, ctx), "NOT_RUNNING");
  });
});

describe("lifecycle", () => {
  it("pause and resume keep the place; each needs the right status", () => {
    const s = started(deep, "outer");
    const p = ok(pause(deep, s, ctx)).state;
    expect(p).toMatchObject({ status: "paused", currentPath: s.currentPath });
    refused(pause(deep, p, ctx), "NOT_RUNNING");
    refused(advance(deep, p, ctx), "NOT_RUNNING");
    refused(resume(deep, s, ctx), "NOT_PAUSED");
    expect(ok(resume(deep, p, ctx)).state.status).toBe("running");
  });

  it("fail records the reason and the end time", () => {
    const r = ok(fail(deep, started(deep, "flat"), "tests broke", { now: 4_000 }));
    expect(r.state).toMatchObject({ status: "failed", failureReason: "tests broke", finishedAt: 4_000 });
    expect(r.happened).toEqual({ type: "failed", reason: "tests broke" });
    refused(fail(deep, r.state, "again", ctx), "NOT_RUNNING");
  });

  it("markCompletionNotified needs a finished run and works once", () => {
    refused(markCompletionNotified(deep, started(deep, "flat"), ctx), "NOT_FINISHED");
    const done = at("flat", [["flat", 1]], { status: "completed" });
    const n = ok(markCompletionNotified(deep, done, ctx));
    expect(n.state.completionNotified).toBe(true);
    expect(n.happened).toEqual({ type: "notified", status: "completed" });
    refused(markCompletionNotified(deep, n.state, ctx), "ALREADY_NOTIFIED");
  });
});

describe("every transition", () => {
  const events: WorkflowEvent[] = [
    { type: "advance" },
    { type: "loop" },
    { type: "cancel" },
    { type: "cancel-now" },
    { type: "pause" },
    { type: "resume" },
    { type: "fail", reason: "x" },
    { type: "mark-notified" },
  ];
  const states = [
    at("outer", [["outer", 0], ["mid", 0], ["inner", 1]]),
    at("outer", [["outer", 0], ["mid", 1]], { cancelPending: true }),
    at("flat", [["flat", 0]], { status: "paused" }),
    at("flat", [["flat", 1]], { status: "completed", finishedAt: 1_500 }),
  ];

  it("never mutates its input, bumps generation by one and stamps updatedAt on success, keeps generation on refusal", () => {
    for (const s of states) {
      const frozen = deepFreeze(structuredClone(s));
      for (const event of events) {
        const r = reduce(deep, frozen, event, { now: 7_777 });
        expect(frozen).toEqual(s);
        if (!r.ok) {
          expect(structuredClone(r.error)).toEqual(r.error);
          continue;
        }
        expect(r.state).toMatchObject({ generation: s.generation + 1, updatedAt: 7_777 });
        expect(r.state.globalStepCount).toBeGreaterThanOrEqual(s.globalStepCount);
        if (event.type !== "cancel") expect(r.state.cancelPending).toBe(false);
      }
    }
  });

  it("a bad clock reading or an unknown event is a refusal, not a throw", () => {
    const s = started(deep, "flat");
    refused(advance(deep, s, { now: -1 }), "INVALID_OPTIONS");
    refused(reduce(deep, s, { type: "warp" } as unknown as WorkflowEvent, ctx), "INVALID_OPTIONS");
  });
});
