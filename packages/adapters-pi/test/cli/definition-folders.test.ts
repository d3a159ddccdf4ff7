/**
 * The definition-folder loader against hostile and odd folders: links out of the folder, FIFOs, huge files,
 * overrides between folders, and many workflows at once. Nothing outside the folder is read; nothing hangs.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadDefinitionFolders, MAX_DEFINITION_FILE_BYTES } from "../../src/definitions/folders.js";
import { DEFS } from "./helpers/fixture-runs.js";

const temps: string[] = [];
afterEach(() => temps.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
function copyOfFixtures(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "pk-defs-"));
  temps.push(dir);
  cpSync(DEFS, path.join(dir, "workflows"), { recursive: true });
  return path.join(dir, "workflows");
}
const codes = (dirs: string[]) => loadDefinitionFolders(dirs).problems.map((p) => [path.basename(p.file), p.code]);
const messages = (dirs: string[]) => loadDefinitionFolders(dirs).problems.map((p) => p.message).join("\n");

describe("loadDefinitionFolders", () => {
  it("loads the fixtures: two workflows, the sub-workflow hidden, phases from front matter", () => {
    const r = loadDefinitionFolders([DEFS]);
    expect(r.problems).toEqual([]);
    expect([...r.registry.workflows.keys()].sort()).toEqual(["check", "ship"]);
    expect(r.registry.workflows.get("check")?.show).toBe(false);
    expect(r.registry.workflows.get("ship")?.phases[0]).toMatchObject({ id: "plan", emoji: "📋", tools: { blacklist: ["write"] }, instructions: "Write down the smallest change that does the task." });
  });

  it("refuses a phase file linked to outside the folder, a FIFO and a huge file, naming each; nothing hangs", () => {
    const root = copyOfFixtures();
    const outside = path.join(path.dirname(root), "secret.md");
    writeFileSync(outside, "---\nid: secret\nname: Secret\n---\n");
    rmSync(path.join(root, "ship", "plan.md"));
    symlinkSync(outside, path.join(root, "ship", "plan.md"));
    rmSync(path.join(root, "check", "test.md"));
    execFileSync("mkfifo", [path.join(root, "check", "test.md")]);
    expect(codes([root])).toEqual(expect.arrayContaining([["plan.md", "PATH_OUTSIDE_ROOT"], ["test.md", "READ_FAILED"]]));
    const root2 = copyOfFixtures();
    writeFileSync(path.join(root2, "check", "review.md"), `---\nid: review\nname: R\n---\n${"x".repeat(MAX_DEFINITION_FILE_BYTES)}`);
    expect(codes([root2])).toEqual(expect.arrayContaining([["review.md", "READ_FAILED"]]));
    expect(messages([root])).toMatch(/test\.md is not a regular file/);
    expect(messages([root2])).toMatch(/review\.md is \d+ bytes; definition files are limited to 524288/);
  });

  it("a later folder's workflow replaces an earlier one of the same key; a single workflow folder loads as one", () => {
    const global = copyOfFixtures();
    const project = mkdtempSync(path.join(tmpdir(), "pk-proj-"));
    temps.push(project);
    mkdirSync(path.join(project, "check"));
    writeFileSync(path.join(project, "check", "workflow.yaml"), 'name: "Project check"\nshow: workflows\nphases:\n  - only.md\n');
    writeFileSync(path.join(project, "check", "only.md"), "---\nid: only\nname: Only\n---\nJust this.\n");
    const r = loadDefinitionFolders([global, project]);
    expect(r.problems).toEqual([]);
    expect(r.registry.workflows.get("check")?.name).toBe("Project check");
    expect([...loadDefinitionFolders([path.join(project, "check")]).registry.workflows.keys()]).toEqual(["check"]);
  });

  it("loads many workflows in one pass", () => {
    const n = process.env["CI"] ? 200 : 1_000;
    const root = mkdtempSync(path.join(tmpdir(), "pk-many-"));
    temps.push(root);
    for (let i = 0; i < n; i++) {
      mkdirSync(path.join(root, `w${i}`));
      writeFileSync(path.join(root, `w${i}`, "workflow.yaml"), `name: "W ${i}"\nphases:\n  - a.md\n${i > 0 ? `  - subworkflow: w${i - 1}\n` : ""}`);
      writeFileSync(path.join(root, `w${i}`, "a.md"), `---\nid: a\nname: A${i}\n---\nDo ${i}.\n`);
    }
    let seen = 0;
    const r = loadDefinitionFolders([root], { onFolder: (k) => (seen = k) });
    expect([r.problems, r.registry.workflows.size, seen]).toEqual([[], n, n]);
  });
});
