/**
 * pi 1.5.2: a session that pi-workflows 1.0.0 ran to its end (it sent its completion message) is continued with
 * phasekit's extension (`-c`): the end is not announced a second time.
 */
import { beforeAll, expect, it } from "vitest";
import type { PiHost } from "../../../../examples/pi/pi-process.js";
import { currentHost, piWorkflowsExtension } from "./hosts.js";
import { e2eProject, until } from "./e2e/project.js";

let host: PiHost;
beforeAll(() => {
  host = currentHost();
}, 300_000);

it("a run pi-workflows finished and announced is not announced again after -c", async () => {
  const p = await e2eProject(host, "pw-done");
  const completes = () => p.session().filter((e) => e["type"] === "custom_message" && e["customType"] === "workflow:complete");
  try {
    p.model.push(...Array.from({ length: 4 }, () => ({ tool: "workflow_step", args: { action: "next" } })), { text: "All done." });
    const a = p.start({ extension: piWorkflowsExtension() });
    a.send({ type: "prompt", message: "/workflow ship Add a flag" });
    await until(() => completes().length === 1, "pi-workflows' completion message", 30_000);
    await new Promise((r) => setTimeout(r, 500));
    await a.kill("SIGKILL");

    const b = p.start({ continueSession: true });
    await b.waitFor((l) => l["type"] === "response" || l["method"] === "setStatus", 20_000, "pi started");
    b.send({ type: "get_state", id: "s1" });
    await b.waitFor((l) => l["type"] === "response" && l["id"] === "s1", 20_000, "get_state");
    await new Promise((r) => setTimeout(r, 800)); // the end message would be sent on the first idle tick
    expect(completes()).toHaveLength(1);
  } finally {
    await p.close();
  }
}, 50_000);
