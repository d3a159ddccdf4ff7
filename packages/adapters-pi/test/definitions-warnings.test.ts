/**
 * What pi-workflows 1.0.0 accepts but would silently ignore or leave literal is loaded the same way here and told
 * once, as a warning with the file and line: a field of the wrong type, a `tools` entry that is no rule, a template
 * variable that neither pi-workflows nor phasekit knows in that field, a command shared by two workflows.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadDefinitionFolders } from "../src/definitions/folders.js";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "pk-def-warn-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function write(rel: string, text: string): void {
  fs.mkdirSync(path.join(root, path.dirname(rel)), { recursive: true });
  fs.writeFileSync(path.join(root, rel), text);
}

describe("definition warnings", () => {
  it("load the workflow and name the file and line of each thing ignored or left literal", () => {
    write("a/workflow.yaml", ['name: "A"', 'commandName: "go"', "loopable: \"yes\"", "initialMessage: |", "  Task: {description}", "  See {tpyo}", "phases:", "  - p.md", ""].join("\n"));
    write("a/p.md", ["---", "id: p", "name: P", 'emoji: "🔍"', "tools:", "  allow: [read]", "---", "", "Do {description}.", "Then {nope} and {nope}.", ""].join("\n"));
    write("b/workflow.yaml", ['name: "B"', 'commandName: "go"', 'initialMessage: "go"', "phases:", "  - p.md", ""].join("\n"));
    write("b/p.md", ["---", "id: p", "name: P", 'emoji: "x"', "---", "Plain.", ""].join("\n"));
    const loaded = loadDefinitionFolders([root]);
    expect([...loaded.registry.workflows.keys()].sort()).toEqual(["a", "b"]);
    expect(loaded.registry.workflows.get("a")?.loopable).toBe(true);
    const seen = loaded.problems.map((p) => [path.relative(root, p.file), p.line, p.code, p.severity]);
    expect(seen).toEqual(
      expect.arrayContaining([
        ["a/workflow.yaml", 3, "INVALID_DEFINITION", "warning"],
        ["a/workflow.yaml", 6, "UNKNOWN_TEMPLATE_VARIABLE", "warning"],
        ["a/p.md", 6, "INVALID_DEFINITION", "warning"],
        ["a/p.md", 10, "UNKNOWN_TEMPLATE_VARIABLE", "warning"],
        ["a/workflow.yaml", 2, "DUPLICATE_COMMAND_NAME", "warning"],
        ["b/workflow.yaml", 2, "DUPLICATE_COMMAND_NAME", "warning"],
      ]),
    );
    expect(loaded.problems).toHaveLength(6); // {nope} twice in one text is told once
    expect(loaded.problems.every((p) => p.severity === "warning")).toBe(true);
    expect(loaded.problems.find((p) => p.code === "UNKNOWN_TEMPLATE_VARIABLE" && p.file.endsWith("p.md"))?.message).toContain("{nope}");
  });
});
