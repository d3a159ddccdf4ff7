/** Issue 21: a gate's routes (onFail / onReject) and the gates themselves in `phasekit diagram` and the inspector's tree. */
import { describe, expect, it } from "vitest";
import { compileDefinitions } from "@phasekit/core";
import { buildDiagram, toMermaid } from "../../src/cli/diagram.js";

const defs = {
  rel: {
    name: "Rel",
    phases: [
      { id: "build", name: "Build" },
      { id: "test", name: "Test", emoji: "🧪", gates: { verify: { commands: ["npm test"] }, onFail: "build" } },
      { subworkflow: "ship" },
    ],
  },
  ship: { name: "Ship", phases: [{ id: "draft", name: "Draft" }, { id: "go", name: "Go", gates: { approve: { prompt: "ok?" }, onReject: "draft" } }] },
};

describe("diagram: gates and routes", () => {
  it("labels gated phases and draws each route as an edge to its target in the same workflow", () => {
    const c = compileDefinitions(defs);
    if (!c.ok) throw new Error(c.error.message);
    const d = buildDiagram(c.registry, "rel");
    if (d === null) throw new Error("no diagram");
    expect(d.nodes[1]).toMatchObject({ id: "p1", label: "🧪 Test (verify; fails → Build)", gates: ["verify"], routes: [{ on: "fail", to: "p0" }] });
    expect(d.nodes[2]?.children?.[1]).toMatchObject({ id: "p2_1", label: "Go (approve; rejected → Draft)", routes: [{ on: "reject", to: "p2_0" }] });
    const m = toMermaid(d);
    expect(m).toContain("p1 -. verify fails .-> p0");
    expect(m).toContain("p2_1 -. rejected .-> p2_0");
    expect(d.nodes[0]).toEqual({ id: "p0", kind: "phase", label: "Build" });
  });
});
