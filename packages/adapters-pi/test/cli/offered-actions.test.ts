/**
 * The inspector's buttons come from the server's one rule (cli/control-actions.ts `offeredActions`): a live run
 * can be paused, stopped or cancelled (a pending request hides its own button and a pending pause offers its
 * withdrawal), a run nobody runs and that is not over can be cancelled, and a finished, new or unreadable run
 * offers nothing. inspector-api.int.test.ts checks that every action offered is carried out.
 */
import { describe, expect, it } from "vitest";
import { offeredActions } from "../../src/cli/control-actions.js";

describe("offeredActions", () => {
  it.each([
    ["running", null, ["pause", "stop", "cancel"]],
    ["running", { signal: "pause" }, ["stop", "resume", "cancel"]],
    ["running", { signal: "stop" }, ["pause", "cancel"]],
    ["paused", null, ["cancel"]],
    ["paused", { signal: "pause" }, ["resume", "cancel"]],
    ["crashed", { signal: "pause" }, ["resume", "cancel"]],
    ["crashed", null, ["cancel"]],
    ["failed", null, ["cancel"]],
    ["completed", null, []],
    ["cancelled", null, []],
    ["new", null, []],
    ["unreadable", null, []],
  ] as const)("%s with pending %j offers %j", (status, pending, actions) => {
    expect(offeredActions(status, pending)).toEqual(actions);
  });
});
