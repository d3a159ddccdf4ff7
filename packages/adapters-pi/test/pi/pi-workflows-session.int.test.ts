/**
 * Compatibility with a real pi-workflows 1.0.0 session: pi 1.5.2 runs pi-workflows as published on the example
 * folder until the run is inside the nested Test phase, pi is killed, and `pi -c` with phasekit's extension
 * instead picks the session up mid-workflow (core migrates the entry) and finishes it, announcing it once. The
 * session is continued on both hosts: pi-workflows 1.0.0 itself loads only on 1.5.2 (it imports
 * `@earendil-works/*` at run time), so 0.73.1 continues a session 1.5.2 wrote.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { beforeAll, expect, it } from "vitest";
import { EXAMPLE_WORKFLOWS } from "../../../../examples/pi/ship-scenario.js";
import { readSession, startPi, type PiHost } from "../../../../examples/pi/pi-process.js";
import { startScriptedModel } from "../../../../examples/pi/scripted-model.js";
import { currentHost, EXTENSION_FILE, HOSTS, piWorkflowsExtension } from "./hosts.js";
import { STATE_SCHEMA_VERSION } from "@phasekit/core";

let host: PiHost;
beforeAll(() => {
  host = currentHost();
}, 300_000);

it.each(HOSTS)("pi $name continues a session that pi-workflows 1.0.0 wrote, at the same phase, to one completion", async ({ get }) => {
  const continuing = get();
  const piWorkflows = piWorkflowsExtension();
  expect(fs.existsSync(piWorkflows)).toBe(true);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "phasekit-pi-compat-"));
  const cwd = path.join(root, "project");
  fs.mkdirSync(path.join(cwd, ".pi"), { recursive: true });
  fs.cpSync(EXAMPLE_WORKFLOWS, path.join(cwd, ".pi", "workflows"), { recursive: true });
  const model = await startScriptedModel();
  const sessionDir = path.join(root, "sessions");
  const base = { host, cwd, agentDir: path.join(root, "home", ".pi", "agent"), sessionDir, baseUrl: model.baseUrl, env: { PHASEKIT_COUNTDOWN_MS: "60000" } };
  let pi = startPi({ ...base, extension: piWorkflows });
  try {
    model.push({ tool: "workflow_step", args: { action: "next" } }, { text: "testing…", hold: true });
    pi.send({ type: "prompt", message: "/workflow ship Add a flag" });
    await model.waitForRequests(2, 60_000);
    const legacyAtTest = (): boolean =>
      readSession(sessionDir).some((e) => e["customType"] === "workflow:state" && (e["data"] as { active?: boolean; currentPath?: unknown[] }).active === true && (e["data"] as { currentPath: unknown[] }).currentPath.length === 2);
    const end = Date.now() + 20_000;
    while (!legacyAtTest() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    expect(legacyAtTest()).toBe(true);
    await pi.kill("SIGKILL");

    model.release();
    model.push({ tool: "workflow_step", args: { action: "next" } }, { tool: "workflow_step", args: { action: "next" } }, { tool: "workflow_step", args: { action: "next" } }, { text: "All done." });
    pi = startPi({ ...base, host: continuing, extension: EXTENSION_FILE, continueSession: true });
    const resumed = await pi.waitFor((l) => l["method"] === "setStatus" && typeof l["statusText"] === "string", 30_000, "the resumed status");
    expect(resumed["statusText"]).toBe("Ship a change > Check [2/3] > 🧪 Test [1/2]");
    pi.send({ type: "prompt", message: "Continue the workflow." });
    const done = () => readSession(sessionDir).filter((e) => e["type"] === "custom_message" && e["customType"] === "workflow:complete");
    const end2 = Date.now() + 60_000;
    while (done().length === 0 && Date.now() < end2) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 300));
    expect(done()).toHaveLength(1);
    const states = readSession(sessionDir).filter((e) => e["customType"] === "workflow:state").map((e) => e["data"] as Record<string, unknown>);
    expect(states[0]).toMatchObject({ active: true, workflowKey: "ship" }); // pi-workflows' own entries stay as they were
    expect(states.at(-1)).toMatchObject({ schemaVersion: STATE_SCHEMA_VERSION, status: "completed", completionNotified: true, taskId: states[0]?.["taskId"] });
  } finally {
    await pi.kill("SIGKILL");
    await model.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
}, 180_000);
