/**
 * pi-workflows 1.0.0's documented example folders (docs/examples.md of the installed package, every
 * "### `folder/file`" heading and the fenced block under it) written to disk unchanged and loaded as folders
 * through loadDefinitionFolders: every workflow loads with no blocking problem, each shown one walks to completion,
 * and their initial messages render pi's variables. Folder names pi accepts and phasekit once refused load too.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { initialMessage, reduce, resolveActive, type WorkflowRegistry, type WorkflowState } from "@phasekit/core";
import { loadDefinitionFolders } from "../src/definitions/folders.js";
import { resultText } from "./pi/helpers/fake-pi.js";
import { loadExtension } from "./pi/helpers/setup.js";

const EXAMPLES = path.resolve(import.meta.dirname, "../../../node_modules/@harms-haus/pi-workflows/docs/examples.md");
const roots: string[] = [];
afterAll(() => {
  for (const r of roots) fs.rmSync(r, { recursive: true, force: true });
});

/** The files the examples document: path (folder/file) → content. */
function documentedFiles(markdown: string): Map<string, string> {
  const files = new Map<string, string>();
  const lines = markdown.split("\n");
  let pending: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const heading = /^### `([^`/]+\/[^`]+\.(?:yaml|md))`$/.exec(line);
    if (heading !== null) {
      pending = heading[1];
      continue;
    }
    if (pending !== undefined && /^```/.test(line)) {
      const body: string[] = [];
      for (i++; i < lines.length && lines[i] !== "```"; i++) body.push(lines[i] as string);
      files.set(pending, `${body.join("\n")}\n`);
      pending = undefined;
    }
  }
  return files;
}

function writeTree(files: ReadonlyMap<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "pk-pi-examples-"));
  roots.push(root);
  for (const [rel, text] of files) {
    fs.mkdirSync(path.join(root, path.dirname(rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  return root;
}

function walk(registry: WorkflowRegistry, key: string): string[] {
  const r = reduce(registry, null, { type: "start", workflowKey: key, taskId: "t-1", taskDescription: "Add login page" }, { now: 1 });
  if (!r.ok) throw new Error(r.error.message);
  let s: WorkflowState = r.state;
  const ids: string[] = [];
  for (let i = 0; s.status === "running" && i < 50; i++) {
    const a = resolveActive(registry, s);
    if (!a.ok || a.active === null) throw new Error("lost");
    ids.push(a.active.phase.id);
    const next = reduce(registry, s, { type: "advance" }, { now: 2 + i });
    if (!next.ok) throw new Error(next.error.message);
    s = next.state;
  }
  expect(s.status).toBe("completed");
  return ids;
}

describe("pi-workflows' documented examples, as folders", () => {
  const files = documentedFiles(fs.readFileSync(EXAMPLES, "utf8"));

  it("every example folder loads, with no blocking problem", () => {
    const root = writeTree(files);
    const loaded = loadDefinitionFolders([root]);
    expect(loaded.problems.filter((p) => p.severity !== "warning")).toEqual([]);
    const folders = [...new Set([...files.keys()].map((f) => f.split("/")[0]))].sort();
    expect(folders).toEqual(["audit", "flat-iterate", "guided-fix", "hello-task", "rpir", "rpir-dev", "rpir-implement", "rpir-improve"]);
    expect([...loaded.registry.workflows.keys()].sort()).toEqual(folders);
    expect(loaded.problems).toEqual([]);
  });

  it("each shown workflow walks to completion; rpir's initial message renders pi's variables", () => {
    const { registry } = loadDefinitionFolders([writeTree(files)]);
    expect(walk(registry, "rpir")).toEqual(["research", "planning", "implementing", "reviewing"]);
    expect(walk(registry, "rpir-dev")).toEqual(["rpir-dev-research", "rpir-dev-planning", "shared-implement", "shared-review"]);
    for (const key of registry.commands.values()) expect(walk(registry, key).length).toBeGreaterThan(0);
    const started = reduce(registry, null, { type: "start", workflowKey: "rpir", taskId: "t-1", taskDescription: "Add login page" }, { now: 1 });
    if (!started.ok) throw new Error(started.error.message);
    const text = initialMessage(registry, started.state);
    expect(text.ok && text.text).toBe('Starting RPIR Development for: "Add login page"\n\nPhase 1: 🔍 Research\nAvailable profiles: vertical-scout, horizontal-scout\n');
  });

  it("end to end in the extension: /workflow rpir starts with pi's initial message and workflow_step walks it to the end", async () => {
    const root = writeTree(files);
    const global = fs.mkdtempSync(path.join(os.tmpdir(), "pk-pi-examples-global-"));
    roots.push(global);
    const { pi } = loadExtension({ cwd: root, workflows: root, global });
    await pi.emit("session_start", {});
    await pi.command("workflow", "rpir Add login page");
    expect(pi.userMessages[0]).toBe('Starting RPIR Development for: "Add login page"\n\nPhase 1: 🔍 Research\nAvailable profiles: vertical-scout, horizontal-scout\n');
    const lines: string[] = [];
    for (let i = 0; i < 4; i++) lines.push(resultText(await pi.step({ action: "next" })).split("\n")[0] as string);
    expect(lines).toEqual([
      "✓ Advanced: Research → 📋 Planning (then ⚙️ Implementation)",
      "✓ Advanced: Planning → ⚙️ Implementation (then 🔎 Review)",
      "✓ Advanced: Implementation → 🔎 Review (last phase: when this phase is finished, call workflow_step next)",
      "✓ Review → DONE. All phases of RPIR Development are complete; stop here.",
    ]);
  });

  it("folder names pi-workflows loads are workflow keys: digits first, dots, spaces, '_', non-Latin, 70 characters", () => {
    const names = ["2024-release", "1st-pass", "01-review", "code.review", "Review Flow", "_private", "レビュー", "w".repeat(70)];
    const tree = new Map<string, string>();
    for (const [i, name] of names.entries()) {
      tree.set(`${name}/workflow.yaml`, `name: "W ${i}"\ncommandName: "c${i}"\ninitialMessage: "go {description}"\nphases:\n  - a.md\n`);
      tree.set(`${name}/a.md`, `---\nid: "1-research"\nname: "Research Phase"\nemoji: "🔍"\n---\nDo {description}.\n`);
    }
    const loaded = loadDefinitionFolders([writeTree(tree)]);
    expect(loaded.problems).toEqual([]);
    expect([...loaded.registry.workflows.keys()].sort()).toEqual([...names].sort());
  });
});
