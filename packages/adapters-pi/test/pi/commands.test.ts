/** The slash commands against the typed fake. */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadExtension, tempProject } from "./helpers/setup.js";

let project: ReturnType<typeof tempProject>;
beforeEach(() => {
  project = tempProject();
});
afterEach(() => project.cleanup());

async function loaded() {
  const l = loadExtension(project);
  await l.pi.emit("session_start", {});
  return l.pi;
}

describe("/workflow", () => {
  it("starts: state persisted, session named, initial message sent with pi-workflows' variables", async () => {
    const pi = await loaded();
    await pi.command("workflow", "ship Add a --version flag");
    expect(pi.sessionName).toBe("Ship: Add a --version flag");
    expect(pi.userMessages).toEqual(['Starting Ship a change for: "Add a --version flag"\nBegin with 📋 Plan.\n']);
    expect(pi.branch.filter((e) => e.customType === "workflow:state")).toHaveLength(1);
    expect(pi.statuses.at(-1)).toBe("Ship a change > 📋 Plan [1/3]");
  });

  it("refuses a workflow meant only for use inside others, and an unknown one", async () => {
    const pi = await loaded();
    await pi.command("workflow", "check Run it");
    await pi.command("workflow", "nope Run it");
    expect(pi.notices.map((n) => n.text)).toEqual([
      '"check" can only run inside other workflows; it cannot be started directly.',
      'Unknown workflow "nope". Available: ship',
    ]);
    expect(pi.branch).toHaveLength(0);
  });

  it("asks before replacing an active workflow and keeps it on no", async () => {
    const pi = await loaded();
    await pi.command("workflow", "ship First");
    pi.confirmAnswers.push(false);
    await pi.command("workflow", "ship Second");
    expect(pi.notices.at(-1)?.text).toBe("Kept the active workflow.");
    expect(pi.userMessages).toHaveLength(1);
    pi.confirmAnswers.push(true);
    await pi.command("workflow", "ship Second");
    expect(pi.userMessages).toHaveLength(2);
    expect(pi.sessionName).toBe("Ship: Second");
  });

  it("completes global and project workflows; the project one replaces a global one of the same key", async () => {
    fs.cpSync(path.join(project.workflows, "ship"), path.join(project.global, "ship"), { recursive: true });
    fs.cpSync(path.join(project.workflows, "ship"), path.join(project.global, "deploy"), { recursive: true });
    const yaml = path.join(project.global, "deploy", "workflow.yaml");
    fs.writeFileSync(yaml, fs.readFileSync(yaml, "utf8").replace('commandName: "ship"', 'commandName: "deploy"').replace('name: "Ship a change"', 'name: "Deploy"').replace("  - subworkflow: check\n", ""));
    const pi = await loaded();
    const items = pi.commands.get("workflow")?.getArgumentCompletions?.("") ?? [];
    expect(items.map((i) => i.label).sort()).toEqual(["deploy — Deploy (global)", "ship — Ship a change (project)"]);
    expect(pi.commands.get("workflow")?.getArgumentCompletions?.("sh")?.map((i) => i.value)).toEqual(["ship"]);
  });
});

describe("/cancel-workflow, /workflow-status", () => {
  it("cancels at once and says so exactly once", async () => {
    const pi = await loaded();
    await pi.command("workflow", "ship Add a flag");
    await pi.command("cancel-workflow");
    await pi.command("cancel-workflow");
    const done = pi.sent.filter((m) => m.customType === "workflow:complete");
    expect(done).toHaveLength(1);
    expect(done[0]?.content).toContain("Ship a change Cancelled");
    expect(pi.notices.at(-1)?.text).toBe("No active workflow to cancel.");
    expect(pi.statuses.at(-1)).toBeUndefined();
  });

  it("shows the phase, its instructions and the run id", async () => {
    const pi = await loaded();
    await pi.command("workflow-status");
    expect(pi.notices.at(-1)?.text).toBe("No active workflow.");
    await pi.command("workflow", "ship Add a flag");
    await pi.command("workflow-status");
    expect(pi.notices.at(-1)?.text).toContain("Current phase: 📋 Plan");
    expect(pi.notices.at(-1)?.text).toContain("Run id: run00001");
  });
});
