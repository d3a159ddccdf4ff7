/** Definitions pinned to the run, against the typed fake: never a silent move, and "move" only where the phase still exists. */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { resultText } from "./helpers/fake-pi.js";
import { loadExtension, tempProject, WAIT } from "./helpers/setup.js";

let project: ReturnType<typeof tempProject>;
beforeEach(() => {
  project = tempProject();
});
afterEach(() => project.cleanup());

function insertLint(): void {
  const dir = path.join(project.workflows, "check");
  fs.writeFileSync(path.join(dir, "lint.md"), "---\nid: lint\nname: Lint\n---\nRun the linter.\n");
  const yaml = path.join(dir, "workflow.yaml");
  fs.writeFileSync(yaml, fs.readFileSync(yaml, "utf8").replace("  - test.md", "  - lint.md\n  - test.md"));
}

async function inTest(hasUI: boolean) {
  const { pi } = loadExtension(project, { hasUI });
  await pi.emit("session_start", {});
  await pi.command("workflow", "ship Add a flag");
  await pi.step({ action: "next" });
  return pi;
}

describe("definitions pinned to the run", () => {
  it("without a UI to ask, an inserted phase does not move the run: it goes on with the pinned definitions", async () => {
    const pi = await inTest(false);
    insertLint();
    await pi.emit("session_tree", {});
    expect(pi.statuses.at(-1)).toBe("Ship a change > Check [2/3] > 🧪 Test [1/2]");
    expect(resultText(await pi.step({ action: "next" }))).toMatch(/^✓ Advanced: Test → 🔍 Review/);
  });

  it("'move' is not offered when the current phase is gone from the new definitions; dismissing keeps the pin", async () => {
    const pi = await inTest(true);
    const dir = path.join(project.workflows, "check");
    const yaml = path.join(dir, "workflow.yaml");
    fs.writeFileSync(yaml, fs.readFileSync(yaml, "utf8").replace("  - test.md\n", ""));
    await pi.emit("session_tree", {});
    await vi.waitFor(() => expect(pi.selects).toHaveLength(1), WAIT);
    expect(pi.selects[0]?.options).toEqual(["Keep the definitions the run started with", "Restart the current scope with the new definitions", "Cancel the run"]);
    expect(pi.selects[0]?.title).toContain("check: changed (test removed)");
    await vi.waitFor(() => expect(pi.notices.some((n) => n.text.includes("keeps the definitions it started with (no choice was made)"))).toBe(true), WAIT);
    expect(resultText(await pi.step({ action: "status" }))).toContain("Test");
  });
});

describe("the pin lives with the run (its plan folder), not only in the session that started it", () => {
  it("/workflow-resume in another session, after the files changed, offers 'keep' and goes on with the pinned definitions", async () => {
    const first = loadExtension(project, { hasUI: true, options: { planRoot: "ai_plan" } }).pi;
    await first.emit("session_start", {});
    await first.command("workflow", "ship Add a flag");
    await first.step({ action: "next" }); // Check: Test
    await first.emit("session_shutdown", {});
    insertLint();
    // Another session: a new branch, nothing of the first one's entries.
    const second = loadExtension(project, { hasUI: true, options: { planRoot: "ai_plan" } }).pi;
    await second.emit("session_start", {});
    second.selectAnswers.push("Keep the definitions the run started with");
    await second.command("workflow-resume", "run00001");
    expect(second.selects).toHaveLength(1);
    expect(second.selects[0]?.options).toEqual([
      "Keep the definitions the run started with",
      "Move to the new definitions (same phase)",
      "Restart the current scope with the new definitions",
      "Cancel the run",
    ]);
    expect(second.selects[0]?.title).toContain("check: changed (lint added)");
    expect(second.statuses.at(-1)).toBe("Ship a change > Check [2/3] > 🧪 Test [1/2]");
    expect(resultText(await second.step({ action: "next" }))).toMatch(/^✓ Advanced: Test → 🔍 Review/);
    await second.emit("session_shutdown", {});
  });

  it("a run moved to the new definitions in one session is pinned to them in the next", async () => {
    const first = loadExtension(project, { hasUI: true, options: { planRoot: "ai_plan" } }).pi;
    await first.emit("session_start", {});
    await first.command("workflow", "ship Add a flag");
    await first.step({ action: "next" });
    insertLint();
    first.selectAnswers.push("Move to the new definitions (same phase)");
    await first.emit("session_tree", {});
    // The notice comes after the move is committed and its pin recorded in the run's history (the status shows the
    // move before the pin is written: waiting on it let the next session read the older pin now and then).
    await vi.waitFor(() => expect(first.notices.some((n) => n.text.includes("run00001 moved to the new definitions"))).toBe(true), WAIT);
    expect(first.statuses.at(-1)).toBe("Ship a change > Check [2/3] > 🧪 Test [2/3]");
    await first.emit("session_shutdown", {});
    // The lint phase goes away again: the run (pinned to the moved-to definitions) is asked, and keeps them.
    const yaml = path.join(project.workflows, "check", "workflow.yaml");
    fs.writeFileSync(yaml, fs.readFileSync(yaml, "utf8").replace("  - lint.md\n", ""));
    const second = loadExtension(project, { hasUI: true, options: { planRoot: "ai_plan" } }).pi;
    await second.emit("session_start", {});
    second.selectAnswers.push("Keep the definitions the run started with");
    await second.command("workflow-resume", "run00001");
    expect(second.selects[0]?.title).toContain("check: changed (lint removed)");
    expect(second.statuses.at(-1)).toBe("Ship a change > Check [2/3] > 🧪 Test [2/3]");
    await second.emit("session_shutdown", {});
  });
});

describe("pinOnBranch", () => {
  it("keeps a pin whose definitions compile with warnings only (two workflows sharing a command name)", async () => {
    const { pinOnBranch, DEFINITIONS_ENTRY } = await import("../../src/pi/pinned-definitions.js");
    const phase = (id: string) => ({ id, name: id, emoji: "•", instructions: "x" });
    const workflows = {
      a: { name: "A", commandName: "same", phases: [phase("one")] },
      b: { name: "B", commandName: "same", phases: [phase("two")] },
    };
    const pin = pinOnBranch([{ type: "custom", customType: DEFINITIONS_ENTRY, data: { taskId: "t1", workflows } }], "t1");
    expect(pin?.registry.workflows.has("a")).toBe(true);
    // An error (a dangling reference) still voids it.
    const broken = { a: { name: "A", phases: [{ workflow: "missing" }] } };
    expect(pinOnBranch([{ type: "custom", customType: DEFINITIONS_ENTRY, data: { taskId: "t2", workflows: broken } }], "t2")).toBeUndefined();
  });
});
