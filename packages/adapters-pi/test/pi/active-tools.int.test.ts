/**
 * Real pi CLI, both hosts: a phase's blocked tools are not offered to the model (setActiveTools), phase by phase,
 * and the session's own tool set comes back when the run ends. The call-time block is tested in real-cli.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { PiHost } from "../../../../examples/pi/pi-process.js";
import { HOSTS } from "./hosts.js";
import { e2eProject, until } from "./e2e/project.js";

describe.each(HOSTS)("pi $name: phases hide their blocked tools", ({ get }) => {
  let host: PiHost;
  beforeAll(() => {
    host = get();
  }, 300_000);

  it("Plan hides write/edit, Test offers only its whitelist, and the end restores the session's set", async () => {
    const p = await e2eProject(host, "tools");
    try {
      p.model.push({ tool: "workflow_step", args: { action: "next" } }, { text: "testing" });
      const pi = p.start();
      pi.send({ type: "prompt", message: "/workflow ship Add a flag" });
      await p.model.waitForRequests(2);
      const [plan, test] = p.model.requests.map((r) => [...r.tools].sort());
      expect(plan).toContain("read");
      expect(plan).toContain("workflow_step");
      expect(plan).not.toContain("write");
      expect(plan).not.toContain("edit");
      expect(test).toEqual(["bash", "read", "workflow_step"]);
      await pi.waitFor((l) => l["type"] === "agent_end", 20_000, "the agent run's end");
      p.model.push({ text: "ok" });
      pi.send({ type: "prompt", message: "/cancel-workflow" });
      await until(() => p.lastState()?.["status"] === "cancelled", "the run cancelled");
      pi.send({ type: "prompt", message: "Anything else?" });
      await p.model.waitForRequests(3);
      const after = [...(p.model.requests[2]?.tools ?? [])];
      expect(after).toContain("write");
      expect(after).toContain("edit");
    } finally {
      await p.close();
    }
  }, 40_000);
});
