/** Definitions pinned to the run, against the typed fake: never a silent move, and "move" only where the phase still exists. */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { resultText } from "./helpers/fake-pi.js";
import { loadExtension, tempProject } from "./helpers/setup.js";

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
    await vi.waitFor(() => expect(pi.selects).toHaveLength(1));
    expect(pi.selects[0]?.options).toEqual(["Keep the definitions the run started with", "Restart the current scope with the new definitions", "Cancel the run"]);
    expect(pi.selects[0]?.title).toContain("check: changed (test removed)");
    await vi.waitFor(() => expect(pi.notices.some((n) => n.text.includes("keeps the definitions it started with (no choice was made)"))).toBe(true));
    expect(resultText(await pi.step({ action: "status" }))).toContain("Test");
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
