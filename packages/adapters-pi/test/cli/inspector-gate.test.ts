/** Issue 22: the inspector's approval form gets a pi run's approve gate (name, prompt, payload schema) from the definitions. */
import { describe, expect, it } from "vitest";
import { advance, compileDefinitions, start } from "@phasekit/core";
import { approveGateOf } from "../../src/cli/inspector-gate.js";

const schema = { type: "object", properties: { channel: { enum: ["beta", "stable"] } }, required: ["channel"] };
const defs = {
  rel: { name: "Rel", phases: [{ id: "build", name: "Build" }, { id: "go", name: "Go", gates: { approve: { prompt: "Ship it?", schema } } }] },
};

describe("inspector: the approve gate a run waits at", () => {
  it("names the current phase's gate with its prompt and schema; nothing before it or without definitions", () => {
    const c = compileDefinitions(defs);
    if (!c.ok) throw new Error(c.error.message);
    const s = start(c.registry, { workflowKey: "rel", taskId: "t", taskDescription: "d" }, { now: 1 });
    if (!s.ok) throw new Error(s.error.message);
    expect(approveGateOf(c.registry, s.state)).toBeNull();
    const a = advance(c.registry, s.state, { now: 2 });
    if (!a.ok) throw new Error(a.error.message);
    expect(approveGateOf(c.registry, a.state)).toEqual({ name: "go", prompt: "Ship it?", schema });
    expect(approveGateOf(null, a.state)).toBeNull();
    expect(approveGateOf(c.registry, { not: "a state" })).toBeNull();
  });
});
