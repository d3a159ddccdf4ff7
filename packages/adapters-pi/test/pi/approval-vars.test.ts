/**
 * Issue 21 in pi (typed fake host): the payload an approve gate passed with is the `{approval}` variable of the
 * next phases' instructions (JSON; "(none)" before any approval), kept as a session entry.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { requestApproval } from "../../src/index.js";
import { resultText } from "./helpers/fake-pi.js";
import { loadExtension, tempProject } from "./helpers/setup.js";

let project: ReturnType<typeof tempProject>;
beforeEach(() => {
  project = tempProject();
  const dir = path.join(project.workflows, "release");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "workflow.yaml"), 'name: "Release"\nphases:\n  - choose.md\n  - publish.md\n');
  fs.writeFileSync(
    path.join(dir, "choose.md"),
    "---\nid: choose\nname: Choose\ngates:\n  approve:\n    prompt: \"Which channel?\"\n    schema: { type: object, properties: { channel: { enum: [beta, stable] } }, required: [channel] }\n---\nAsk for a channel. So far: {approval}\n",
  );
  fs.writeFileSync(path.join(dir, "publish.md"), "---\nid: publish\nname: Publish\n---\nPublish to the channel the person chose: {approval}\n");
});
afterEach(() => project.cleanup());

describe("pi: {approval} in the next phase's instructions", () => {
  it("is (none) before the gate and the checked payload after it", async () => {
    const { pi } = loadExtension(project, { options: { planRoot: "ai_plan" } });
    await pi.emit("session_start", {});
    await pi.command("workflow", "release Ship 1.2");
    expect(resultText(await pi.step({ action: "status" }))).toContain("Ask for a channel. So far: (none)");
    const id = fs.readdirSync(path.join(project.cwd, "ai_plan"))[0] as string;
    await requestApproval({ repoRoot: project.cwd, target: id, approval: { decision: "approve", name: "choose", data: { channel: "beta" } } });
    const moved = resultText(await pi.step({ action: "next" }));
    expect(moved).toMatch(/^✓ Advanced: Choose → Publish/);
    expect(moved).toContain('Publish to the channel the person chose: {"channel":"beta"}');
    const [before] = await pi.emit("before_agent_start", { prompt: "go on" } as never);
    expect(JSON.stringify(before)).toContain('Publish to the channel the person chose: {\\"channel\\":\\"beta\\"}');
  });
});
