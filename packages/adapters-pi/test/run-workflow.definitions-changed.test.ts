/**
 * runWorkflow's onDefinitionsChanged (issue 19): a run records the definitions it started with; resumed with other
 * ones it is shown core's diff by phase id and goes on as chosen (keep, move, restart-scope, cancel), never moved
 * to another phase silently.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileDefinitions, isWorkflowError, migrateState, type WorkflowRegistry } from "@phasekit/core";
import { createReporter, runWorkflow, type DefinitionsChange, type DefinitionsChoice } from "@phasekit/adapters-pi";
import { useTempRepos } from "./helpers/temp-repos.js";
import { readPinIn } from "../src/run/definitions-pin.js";

const repo = useTempRepos("pk-defs-changed-");

const phase = (id: string) => ({ id, name: id.toUpperCase(), instructions: `do ${id}` });
function defs(ids: string[]): WorkflowRegistry {
  const r = compileDefinitions({ ship: { name: "Ship", loopable: false, phases: ids.map(phase) } });
  if (!r.ok) throw new Error(r.problems.map((p) => p.message).join("\n"));
  return r.registry;
}
const ORIGINAL = ["plan", "build", "test"];

function options(root: string, registry: WorkflowRegistry, onDefinitionsChanged?: (c: DefinitionsChange) => DefinitionsChoice) {
  return {
    repoRoot: root,
    target: "r1",
    toolName: "ship-bot",
    workflow: { registry, workflowKey: "ship", taskDescription: "ship it" },
    createReporter: () => createReporter({ onChange: () => undefined }),
    ...(onDefinitionsChanged ? { onDefinitionsChanged } : {}),
  };
}
const onDisk = (root: string) => JSON.parse(readFileSync(path.join(root, "ai_plan", "r1", "workflow.json"), "utf8")) as { status: string; phase?: string; state: { currentPath: Array<{ phaseIndex: number }>; status: string } };

/** A run on ORIGINAL that advanced to "build" and returned (paused there). */
async function pausedAtBuild(root: string): Promise<void> {
  const r = await runWorkflow(options(root, defs(ORIGINAL)), async (ctx) => {
    await ctx.workflow?.dispatch({ type: "advance" });
    return ctx.workflow?.statusLine();
  });
  expect(r.status).toBe("paused");
  expect(onDisk(root).phase).toBe("build");
}

/** Resumes r1 with `ids`, records where the body finds itself (after its replayed advance) and where one more advance takes it. */
async function resumeWith(root: string, ids: string[], choose?: (c: DefinitionsChange) => DefinitionsChoice) {
  const seen: { at?: string; next?: string; phases?: string[] } = {};
  const r = await runWorkflow(options(root, defs(ids), choose), async (ctx) => {
    const wf = ctx.workflow;
    if (wf == null) throw new Error("no workflow");
    seen.phases = wf.registry.workflows.get("ship")?.phases.map((p) => ("id" in p ? p.id : "?"));
    // The body replays its first run's dispatch (by occurrence), then catches up with the run as it is now.
    await wf.dispatch({ type: "advance" });
    seen.at = onDisk(root).phase;
    await wf.dispatch({ type: "advance" });
    seen.next = onDisk(root).phase;
    return "x";
  });
  return { r, seen };
}

describe("runWorkflow: definitions changed under a resumed run", () => {
  it("without onDefinitionsChanged a phase inserted before the current one does not move the run: it keeps its pinned definitions", async () => {
    const root = repo();
    await pausedAtBuild(root);
    const { seen } = await resumeWith(root, ["plan", "lint", "build", "test"]);
    // Before: the run's path (index 1) silently named "lint", the inserted phase.
    expect(seen).toEqual({ at: "build", next: "test", phases: ORIGINAL });
  });

  it("shows core's diff by phase id (one insertion is one change) and the choices that work", async () => {
    const root = repo();
    await pausedAtBuild(root);
    const changes: DefinitionsChange[] = [];
    await resumeWith(root, ["plan", "lint", "build", "test"], (c) => (changes.push(c), "keep"));
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({
      slug: "r1",
      workflowKey: "ship",
      resolves: true,
      choices: ["keep", "move", "restart-scope", "cancel"],
      diff: [{ workflowKey: "ship", change: "changed", phases: [{ id: "lint", change: "added", index: 1 }] }],
    });
    expect(changes[0]?.text).toBe("  ship: changed (lint added)");
    // Kept: the next resume with the same files is asked again (the run still holds its pin), and nothing moved.
    const again: DefinitionsChange[] = [];
    await resumeWith(root, ["plan", "lint", "build", "test"], (c) => (again.push(c), "keep"));
    expect(again).toHaveLength(1);
  });

  it("move: the new definitions at the same phase id; the run is then pinned to them (no question next time)", async () => {
    const root = repo();
    await pausedAtBuild(root);
    const { seen } = await resumeWith(root, ["plan", "lint", "build", "test"], () => "move");
    expect(seen).toEqual({ at: "build", next: "test", phases: ["plan", "lint", "build", "test"] });
    expect(onDisk(root).state.currentPath[0]?.phaseIndex).toBe(3);
    const asked: DefinitionsChange[] = [];
    await resumeWith(root, ["plan", "lint", "build", "test"], (c) => (asked.push(c), "keep"));
    expect(asked).toEqual([]);
  });

  it("restart-scope: the current scope starts again on the new definitions", async () => {
    const root = repo();
    await pausedAtBuild(root);
    const { seen } = await resumeWith(root, ["plan", "lint", "build", "test"], () => "restart-scope");
    expect(seen).toEqual({ at: "plan", next: "lint", phases: ["plan", "lint", "build", "test"] });
  });

  it("cancel: the run ends cancelled without running the body; the journal and workflow.json say so", async () => {
    const root = repo();
    await pausedAtBuild(root);
    let ran = false;
    const r = await runWorkflow(options(root, defs(["plan", "lint", "build", "test"]), () => "cancel"), async () => {
      ran = true;
      return "x";
    });
    expect(ran).toBe(false);
    expect(r).toMatchObject({ status: "cancelled", steps: [] });
    expect(r.status === "cancelled" && r.reason).toContain("ship: changed (lint added)");
    expect(onDisk(root)).toMatchObject({ status: "cancelled", state: { status: "cancelled" } });
  });

  it("the current phase removed: move is not offered; answering it is DEFINITIONS_CHANGED and nothing is written", async () => {
    const root = repo();
    await pausedAtBuild(root);
    const before = readFileSync(path.join(root, "ai_plan", "r1", "workflow.json"), "utf8");
    const changes: DefinitionsChange[] = [];
    const err = await runWorkflow(options(root, defs(["plan", "test"]), (c) => (changes.push(c), "move")), async () => "x").catch((e: unknown) => e);
    expect(changes[0]?.choices).toEqual(["keep", "restart-scope", "cancel"]);
    expect(changes[0]?.diff).toEqual([{ workflowKey: "ship", change: "changed", phases: [{ id: "build", change: "removed", index: 1 }] }]);
    expect(isWorkflowError(err, "DEFINITIONS_CHANGED")).toBe(true);
    expect((err as Error).message).toContain('answered "move", which is not one of keep, restart-scope, cancel');
    expect(readFileSync(path.join(root, "ai_plan", "r1", "workflow.json"), "utf8")).toBe(before);
  });

  it("a run with no pinned copy (recorded before pins existed) is refused, not moved, unless a choice is made", async () => {
    const root = repo();
    await pausedAtBuild(root);
    // The run of an earlier version: its state records fingerprints, its history holds no pin.
    const logDir = path.join(root, "ai_plan", "r1");
    const meta = JSON.parse(readFileSync(path.join(logDir, "workflow.json"), "utf8")) as Record<string, unknown>;
    rmSync(path.join(logDir, "runlog"), { recursive: true, force: true });
    writeFileSync(path.join(logDir, "workflow.json"), JSON.stringify(meta));
    const err = await runWorkflow(options(root, defs(["plan", "lint", "build", "test"])), async () => "x").catch((e: unknown) => e);
    expect(isWorkflowError(err, "DEFINITIONS_CHANGED")).toBe(true);
    expect((err as Error).message).toContain("no pinned definitions to keep");
    const asked: DefinitionsChange[] = [];
    const { seen } = await resumeWith(root, ["plan", "lint", "build", "test"], (c) => (asked.push(c), "restart-scope"));
    expect(asked[0]?.choices).toEqual(["restart-scope", "cancel"]);
    // Restarted at "plan"; with no recorded dispatch to replay, the body's first advance is live.
    expect(seen).toEqual({ at: "lint", next: "build", phases: ["plan", "lint", "build", "test"] });
  });

  it("a finished run re-entered with other definitions gets no pin of them under its old fingerprints", async () => {
    const root = repo();
    await runWorkflow(options(root, defs(ORIGINAL)), async (ctx) => {
      for (let i = 0; i < 3; i++) await ctx.workflow?.dispatch({ type: "advance" });
    });
    expect(onDisk(root).state.status).toBe("completed");
    // A run of an earlier version: no pin in its history.
    rmSync(path.join(root, "ai_plan", "r1", "runlog"), { recursive: true, force: true });
    await runWorkflow({ ...options(root, defs(["plan", "lint", "build", "test"])), reenter: true }, async () => "again");
    const state = migrateState(onDisk(root).state);
    if (!state.ok) throw new Error("state");
    expect(await readPinIn(path.join(root, "ai_plan", "r1"), state.state)).toBeUndefined();
  });

  it("unchanged definitions ask nothing, and a new run asks nothing", async () => {
    const root = repo();
    const asked: DefinitionsChange[] = [];
    const choose = (c: DefinitionsChange): DefinitionsChoice => (asked.push(c), "keep");
    await runWorkflow(options(root, defs(ORIGINAL), choose), async (ctx) => void (await ctx.workflow?.dispatch({ type: "advance" })));
    const { seen } = await resumeWith(root, ORIGINAL, choose);
    expect(asked).toEqual([]);
    expect(seen).toEqual({ at: "build", next: "test", phases: ORIGINAL });
  });
});
