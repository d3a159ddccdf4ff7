/**
 * The pi extension's definition roots over definitions/ (pi-workflows 1.0.0's format): global and project folders,
 * errors with file and line shown once, hostile files.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadDefinitionFolders } from "../../src/pi/index.js";
import { loadExtension, tempProject } from "./helpers/setup.js";

let project: ReturnType<typeof tempProject>;
beforeEach(() => {
  project = tempProject();
});
afterEach(() => project.cleanup());

const load = () => loadDefinitionFolders({ global: project.global, project: project.workflows });

describe("loadDefinitionFolders", () => {
  it("loads the example folder unchanged: phases from Markdown, tools, a sub-workflow shown only inside others", () => {
    const r = load();
    expect(r.problems).toEqual([]);
    const ship = r.registry.workflows.get("ship");
    expect(ship?.phases[0]).toMatchObject({ id: "plan", name: "Plan", emoji: "📋", tools: { blacklist: ["write", "edit"] } });
    expect(ship?.phases[1]).toEqual({ subworkflow: "check" });
    expect((ship?.phases[0] as { instructions: string }).instructions).toMatch(/^Read the code/);
    expect(r.registry.workflows.get("check")?.show).toBe(false);
    expect([...r.registry.commands.keys()]).toEqual(["ship"]);
    expect(r.sources.get("ship")).toEqual({ file: path.join(fs.realpathSync(project.workflows), "ship", "workflow.yaml"), scope: "project" });
  });

  it("a YAML error names the file and line; the other workflows still load", () => {
    fs.mkdirSync(path.join(project.workflows, "broken"));
    fs.writeFileSync(path.join(project.workflows, "broken", "workflow.yaml"), 'name: "Broken"\nphases:\n  - a.md\n  bad: [\n');
    const r = load();
    expect(r.registry.workflows.has("ship")).toBe(true);
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]).toMatchObject({ file: expect.stringMatching(/broken\/workflow\.yaml$/), line: 4, workflowKey: "broken", message: expect.stringMatching(/broken\/workflow\.yaml:4: All mapping items must start at the same column$/) });
  });

  it("a front-matter error names the phase file and its line", () => {
    fs.writeFileSync(path.join(project.workflows, "ship", "report.md"), "---\nid: report\nname: [unclosed\n---\nbody\n");
    const r = load();
    expect(r.registry.workflows.has("ship")).toBe(false);
    // yaml reports the unclosed flow sequence where the front matter ends: line 4 of the file.
    expect(r.problems[0]).toMatchObject({ file: expect.stringMatching(/ship\/report\.md$/), line: 4, message: expect.stringContaining("Flow sequence") });
  });

  it("refuses a phase file that resolves outside the workflows folder, and a FIFO, without hanging", () => {
    const outside = path.join(project.root, "secret.md");
    fs.writeFileSync(outside, "---\nid: x\nname: X\n---\nsecret");
    fs.rmSync(path.join(project.workflows, "ship", "report.md"));
    fs.symlinkSync(outside, path.join(project.workflows, "ship", "report.md"));
    fs.rmSync(path.join(project.workflows, "check", "review.md"));
    execFileSync("mkfifo", [path.join(project.workflows, "check", "review.md")]);
    const r = load();
    const texts = r.problems.map((p) => p.message);
    expect(texts.some((t) => /ship\/report\.md resolves to .*secret\.md, outside .*definition files must stay inside it/.test(t))).toBe(true);
    expect(texts.some((t) => /check\/review\.md is not a regular file/.test(t))).toBe(true);
    expect(r.registry.workflows.size).toBe(0); // ship uses check, which is broken
  });

  it("a project workflow replaces a global one of the same key", () => {
    fs.cpSync(path.join(project.workflows, "check"), path.join(project.global, "check"), { recursive: true });
    fs.writeFileSync(path.join(project.global, "check", "workflow.yaml"), "name: Global check\nshow: workflows\nphases:\n  - test.md\n");
    const r = load();
    expect(r.registry.workflows.get("check")?.name).toBe("Check");
    expect(r.sources.get("check")?.scope).toBe("project");
  });

  it("the extension shows a definition problem once, however often it reloads", async () => {
    fs.writeFileSync(path.join(project.workflows, "check", "test.md"), "---\nid: [\n---\n");
    const { pi } = loadExtension(project);
    await pi.emit("session_start", {});
    await pi.emit("session_tree", {});
    await pi.command("workflow", "ship x");
    const said = pi.notices.filter((n) => n.text.includes("test.md:"));
    expect(said).toHaveLength(1);
  });
});
