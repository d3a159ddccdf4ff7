/** The workflow_step tool against the typed fake. */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { STEP_PARAMETERS } from "../../src/pi/index.js";
import { resultText } from "./helpers/fake-pi.js";
import { loadExtension, tempProject } from "./helpers/setup.js";

let project: ReturnType<typeof tempProject>;
beforeEach(() => {
  project = tempProject();
});
afterEach(() => project.cleanup());

async function started() {
  const loaded = loadExtension(project);
  await loaded.pi.emit("session_start", {});
  await loaded.pi.command("workflow", "ship Add a flag");
  return loaded.pi;
}

describe("workflow_step", () => {
  it("declares plain JSON Schema parameters", () => {
    expect(STEP_PARAMETERS).toMatchObject({ type: "object", required: ["action"], properties: { action: { enum: ["next", "loop", "cancel", "status"] } } });
  });

  it("next returns the next phase's whole context, entering and leaving sub-workflows", async () => {
    const pi = await started();
    const r1 = resultText(await pi.step({ action: "next" }));
    expect(r1).toMatch(/^✓ Advanced: Plan → 🧪 Test/);
    expect(r1).toContain("[Workflow path: Ship a change > Check ▸ 🧪 Test]");
    expect(r1).toContain("Run the tests that cover the change.");
    expect(resultText(await pi.step({ action: "next" }))).toMatch(/^✓ Advanced: Test → 🔍 Review/);
    expect(resultText(await pi.step({ action: "next" }))).toMatch(/^✓ Left sub-workflow: Review → 📝 Report/);
    expect(resultText(await pi.step({ action: "next" }))).toMatch(/^✓ Report → DONE/);
    const refused = await pi.step({ action: "next" });
    expect(refused).toMatchObject({ error: expect.stringContaining("no running workflow to next") });
  });

  it("loop restarts the current scope; a workflow with loopable: false refuses it as an error", async () => {
    const pi = await started();
    await pi.step({ action: "next" });
    await pi.step({ action: "next" });
    expect(resultText(await pi.step({ action: "loop" }))).toMatch(/^✓ Looped back: Review → 🧪 Test/);
    const yaml = path.join(project.workflows, "check", "workflow.yaml");
    fs.writeFileSync(yaml, fs.readFileSync(yaml, "utf8").replace("loopable: true", "loopable: false"));
    pi.selectAnswers.push("Move to the new definitions (same phase)"); // never silently: the user moves the run
    await pi.emit("session_tree", {});
    await new Promise((r) => setTimeout(r, 20)); // asked once pi is idle after the session event
    expect(pi.selects).toHaveLength(1);
    expect(await pi.step({ action: "loop" })).toMatchObject({ error: expect.stringContaining("loop refused") });
  });

  it("cancel is two-step, the arm is never persisted, and another action disarms it", async () => {
    const pi = await started();
    const entries = pi.branch.length;
    expect(resultText(await pi.step({ action: "cancel" }))).toContain("Confirm cancellation");
    expect(pi.branch).toHaveLength(entries);
    await pi.step({ action: "status" });
    expect(resultText(await pi.step({ action: "cancel" }))).toContain("Confirm cancellation");
    expect(resultText(await pi.step({ action: "cancel" }))).toContain("Workflow cancelled");
    const last = pi.branch.filter((e) => e.customType === "workflow:state").at(-1)?.data as { status: string; cancelPending: boolean };
    expect(last).toMatchObject({ status: "cancelled", cancelPending: false });
  });

  it("an armed cancel is forgotten at the user's next message and at the end of the agent run, not at an extension's message", async () => {
    const pi = await started();
    const armed = async () => expect(resultText(await pi.step({ action: "cancel" }))).toContain("Confirm cancellation");
    await armed();
    await pi.emit("input", { text: "from another extension", source: "extension" });
    expect(resultText(await pi.step({ action: "cancel" }))).toContain("Workflow cancelled"); // still armed: confirmed
    await pi.command("workflow", "ship Again");
    await armed();
    await pi.emit("input", { text: "wait, keep going", source: "interactive" });
    await armed(); // the user spoke: the next single cancel only arms again
    await pi.emit("agent_end", { messages: [] });
    await armed(); // the agent run ended: the same
    expect(pi.branch.filter((e) => e.customType === "workflow:state").at(-1)?.data).toMatchObject({ status: "running" });
  });

  it("keeps summaries in the history and shows them in status", async () => {
    const pi = await started();
    await pi.step({ action: "next", summary: "planned the flag" });
    const status = resultText(await pi.step({ action: "status" }));
    expect(status).toContain("Current phase: 🧪 Test");
    expect(status).toContain("Summaries so far:\n- Plan: planned the flag");
  });

  it("refuses an unknown action, and says how to start when there is no workflow", async () => {
    const pi = await started();
    expect(await pi.step({ action: "jump" })).toMatchObject({ error: expect.stringContaining("action must be one of") });
    await pi.command("cancel-workflow");
    expect(resultText(await pi.step({ action: "status" }))).toContain("No active workflow");
  });
});
