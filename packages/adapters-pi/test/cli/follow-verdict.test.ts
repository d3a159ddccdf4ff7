/** The followers' one rule (`followVerdict`, used by `journal --follow` and `watchRun`), case by case. */
import { describe, expect, it } from "vitest";
import { followVerdict } from "../../src/cli/run-view.js";

const damaged = { code: "CORRUPT_FILE", message: "bad line" };

describe("followVerdict", () => {
  it("goes on while a run is running, or its holder is alive whatever the status; ends once nothing more is coming", () => {
    expect(followVerdict(0, { status: "running", error: null }, false).verdict).toBe("go-on");
    expect(followVerdict(0, { status: "completed", error: null }, true).verdict).toBe("go-on");
    expect(followVerdict(0, { status: "completed", error: null }, false).verdict).toBe("ended");
    // A paused run's holder journals `paused` after the state, then lets go: the end waits for it to let go.
    expect(followVerdict(0, { status: "paused", error: null }, true).verdict).toBe("go-on");
    expect(followVerdict(0, { status: "paused", error: null }, false).verdict).toBe("ended");
    // Crashed at the look, re-entered by a live holder at the check after it: more is coming.
    expect(followVerdict(0, { status: "crashed", error: null }, true).verdict).toBe("go-on");
    expect(followVerdict(0, { status: "crashed", error: null }, false).verdict).toBe("ended");
  });

  it("gives up on an unreadable run only at the second look in a row with no live holder", () => {
    const first = followVerdict(0, { status: "running", error: damaged }, false);
    expect(first).toEqual({ unreadableLooks: 1, verdict: "go-on" });
    expect(followVerdict(first.unreadableLooks, { status: "running", error: damaged }, false)).toEqual({ unreadableLooks: 2, verdict: "unreadable" });
    // A live holder may be mid-write: the count starts again; so does a readable look.
    expect(followVerdict(1, { status: "running", error: damaged }, true)).toEqual({ unreadableLooks: 0, verdict: "go-on" });
    expect(followVerdict(1, { status: "running", error: null }, false)).toEqual({ unreadableLooks: 0, verdict: "go-on" });
  });
});
