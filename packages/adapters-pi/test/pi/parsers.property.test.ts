/** Property tests of the session-entry reader: hostile entries never throw and never hide the newest valid state. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { rebuildState, type BranchEntry } from "../../src/pi/index.js";

const runs = process.env["CI"] ? 200 : 500;

const validState = (generation: number) => ({
  schemaVersion: 2,
  workflowKey: "ship",
  status: "running",
  currentPath: [{ workflowKey: "ship", phaseIndex: 0, loops: 0 }],
  globalStepCount: 0,
  loopCount: 0,
  taskId: "run00001",
  taskDescription: "x",
  startedAt: 1,
  updatedAt: 1,
  generation,
  completionNotified: false,
  cancelPending: false,
});

const junkEntry: fc.Arbitrary<BranchEntry> = fc.oneof(
  fc.record({ type: fc.constantFrom("message", "custom", "custom_message", "usage"), customType: fc.option(fc.constantFrom("workflow:state", "other"), { nil: undefined }), data: fc.anything() }),
  fc.record({ type: fc.constant("custom"), customType: fc.constant("workflow:state"), data: fc.oneof(fc.anything(), fc.object(), fc.constant(null)) }),
);

describe("rebuildState", () => {
  it("never throws, and returns the newest valid state whatever surrounds it", () => {
    fc.assert(
      fc.property(fc.array(junkEntry, { maxLength: 30 }), fc.array(junkEntry, { maxLength: 30 }), fc.nat(1000), (before, after, generation) => {
        const ours: BranchEntry = { type: "custom", customType: "workflow:state", data: validState(generation) };
        const r = rebuildState([...before, ours, ...after]);
        // Junk after ours may itself be a valid state only by accident; then it must win (it is newer).
        if (r.state !== null && r.state.generation !== generation) {
          const later = after.some((e) => e.type === "custom" && e.customType === "workflow:state");
          expect(later).toBe(true);
        } else {
          expect(r.state?.generation).toBe(generation);
        }
        for (const s of r.skipped) expect(s.error.code).toBeTypeOf("string");
      }),
      { numRuns: runs },
    );
  });
});
