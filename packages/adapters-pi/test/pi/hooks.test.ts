/** Every hook against the typed fake: rebuild, status, tool rules, context, end-of-run messages, tree moves. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { resultText } from "./helpers/fake-pi.js";
import { loadExtension, tempProject } from "./helpers/setup.js";
import { STATE_SCHEMA_VERSION } from "@phasekit/core";
import { rebuildState } from "../../src/pi/session-entries.js";

let project: ReturnType<typeof tempProject>;
beforeEach(() => {
  project = tempProject();
});
afterEach(() => {
  vi.useRealTimers();
  project.cleanup();
});

async function started(opts: Parameters<typeof loadExtension>[1] = {}) {
  const loaded = loadExtension(project, opts);
  await loaded.pi.emit("session_start", { reason: "startup" });
  await loaded.pi.command("workflow", "ship Add a flag");
  return loaded;
}

describe("session_start / session_tree", () => {
  it("sets the status at start, from the branch, before any turn", async () => {
    const { pi } = await started();
    const branch = [...pi.branch];
    const again = loadExtension(project, { branch });
    await again.pi.emit("session_start", { reason: "startup" });
    expect(again.pi.statuses).toEqual(["Ship a change > 📋 Plan [1/3]"]);
    expect(again.pi.widgets.get("workflow-phases")).toEqual(["Workflow: Ship a change", "  ▶ 📋 Plan", "  · ↳ check", "  · 📝 Report"]);
  });

  it("an unreadable newest state entry falls back to the newest readable one and says so once", async () => {
    const { pi } = await started();
    await pi.step({ action: "next" });
    const branch = [...pi.branch, { type: "custom", customType: "workflow:state", data: { schemaVersion: 2, workflowKey: 42 } }];
    const again = loadExtension(project, { branch });
    await again.pi.emit("session_start", { reason: "startup" });
    await again.pi.emit("session_tree", {});
    expect(again.pi.statuses.at(-1)).toBe("Ship a change > Check [2/3] > 🧪 Test [1/2]");
    const said = again.pi.notices.filter((n) => n.text.includes("newest workflow state entry on this branch is unreadable"));
    expect(said).toHaveLength(1);
  });

  it("session_tree follows the branch back to an earlier phase", async () => {
    const { pi } = await started();
    const before = pi.branch.length;
    await pi.step({ action: "next" });
    expect(pi.statuses.at(-1)).toContain("Test");
    pi.branch.splice(before); // pi's navigateTree: the abandoned entries leave the branch
    await pi.emit("session_tree", {});
    expect(pi.statuses.at(-1)).toBe("Ship a change > 📋 Plan [1/3]");
    const [decision] = await pi.emit("tool_call", { toolName: "write" });
    expect(decision).toMatchObject({ block: true });
  });

  it("a rebuild reads the entries this process wrote as a cold read of the same data would (the remembered parse)", async () => {
    const { pi } = await started();
    const moves = [{ action: "next" }, { action: "loop" }, { action: "next" }, { action: "next" }, { action: "cancel" }];
    for (const m of [null, ...moves]) {
      if (m !== null) await pi.step(m);
      const remembered = rebuildState(pi.branch).state;
      // A copy of every entry: nothing of it was parsed before, so core's migration reads it.
      const cold = rebuildState(pi.branch.map((e) => ({ ...e, data: structuredClone(e.data) }))).state;
      expect(remembered).not.toBeNull();
      expect(remembered).toStrictEqual(cold);
    }
  });

  it("picks up a pi-workflows 1.0.0 session mid-workflow and moves it on with the current schema", async () => {
    const legacy = {
      active: true,
      workflowKey: "ship",
      currentPath: [{ workflowKey: "ship", phaseIndex: 1 }, { workflowKey: "check", phaseIndex: 0 }],
      globalStepCount: 2,
      taskId: "wf-1747234567890-a3f9k2",
      taskDescription: "Refactor auth",
      startedAt: 1747234567890,
      completionNotified: false,
      cancelled: false,
    };
    const { pi } = loadExtension(project, { branch: [{ type: "custom", customType: "workflow:state", data: legacy }] });
    await pi.emit("session_start", { reason: "startup" });
    expect(pi.statuses.at(-1)).toBe("Ship a change > Check [2/3] > 🧪 Test [1/2]");
    const r = await pi.step({ action: "next" });
    expect(resultText(r)).toContain("🔍 Review");
    const last = pi.branch.at(-1)?.data as { schemaVersion: number; taskId: string; currentPath: unknown[] };
    expect(last).toMatchObject({ schemaVersion: STATE_SCHEMA_VERSION, taskId: "wf-1747234567890-a3f9k2" });
  });
});

/** What the handlers answered (pi skips a handler that returns nothing: the budget counter's, for one). */
async function answered(results: Promise<unknown[]>): Promise<unknown[]> {
  return (await results).filter((r) => r !== undefined);
}

describe("tool_call", () => {
  it("blocks a blacklisted tool with the templated reason and lets others and workflow_step through", async () => {
    const { pi } = await started();
    expect(await answered(pi.emit("tool_call", { toolName: "write" }))).toEqual([
      { block: true, reason: '[workflow] The tool "write" is blocked during the Plan phase.\nRefer to the current phase instructions for allowed tools and approaches.\nWhen finished, call workflow_step to advance to the next phase.' },
    ]);
    expect(await answered(pi.emit("tool_call", { toolName: "read" }))).toEqual([]);
    expect(await answered(pi.emit("tool_call", { toolName: "workflow_step" }))).toEqual([]);
  });

  it("applies a whitelist inside a sub-workflow, and nothing without a run", async () => {
    const { pi } = await started();
    await pi.step({ action: "next" });
    expect((await answered(pi.emit("tool_call", { toolName: "write" })))[0]).toMatchObject({ block: true });
    expect(await answered(pi.emit("tool_call", { toolName: "bash" }))).toEqual([]);
    await pi.command("cancel-workflow");
    expect(await answered(pi.emit("tool_call", { toolName: "write" }))).toEqual([]);
  });
});

describe("before_agent_start", () => {
  it("injects the hidden context of the current phase while running, nothing otherwise", async () => {
    const loaded = loadExtension(project);
    await loaded.pi.emit("session_start", {});
    expect(await loaded.pi.emit("before_agent_start", { prompt: "hi" })).toEqual([undefined]);
    await loaded.pi.command("workflow", "ship Add a flag");
    const [r] = (await loaded.pi.emit("before_agent_start", { prompt: "go" })) as [{ message: { customType: string; content: string; display: boolean } }];
    expect(r.message.customType).toBe("workflow:context");
    expect(r.message.display).toBe(false);
    expect(r.message.content).toContain("[Workflow path: Ship a change ▸ 📋 Plan]");
    expect(r.message.content).toContain("Do not edit files in this phase.");
  });
});

describe("end of run", () => {
  async function finish(pi: Awaited<ReturnType<typeof started>>["pi"]) {
    for (let i = 0; i < 4; i++) await pi.step({ action: "next" });
  }

  it("0.73.1: the completion goes out after agent_end, from a timer, once; a reload does not resend it", async () => {
    vi.useFakeTimers();
    const { pi } = await started();
    await finish(pi);
    await pi.emit("agent_end", { messages: [{ role: "assistant", stopReason: "stop" }] });
    expect(pi.sent.filter((m) => m.customType === "workflow:complete")).toHaveLength(0); // not inside agent_end
    await vi.advanceTimersByTimeAsync(0);
    await pi.emit("agent_end", { messages: [] });
    await vi.advanceTimersByTimeAsync(10);
    const done = pi.sent.filter((m) => m.customType === "workflow:complete");
    expect(done).toHaveLength(1);
    expect(done[0]).toMatchObject({ display: true, options: { triggerTurn: false } });
    expect(done[0]?.content).toContain("Ship a change Complete");
    const again = loadExtension(project, { branch: [...pi.branch] });
    await again.pi.emit("session_start", { reason: "startup" });
    await again.pi.emit("agent_end", { messages: [] });
    await vi.advanceTimersByTimeAsync(10);
    expect(again.pi.sent.filter((m) => m.customType === "workflow:complete")).toHaveLength(0);
  });

  it("1.5.x: the completion goes out on agent_settled, not from an agent_end timer", async () => {
    vi.useFakeTimers();
    const { pi } = await started({ settledHost: true });
    await finish(pi);
    await pi.emit("agent_end", { messages: [] });
    await vi.advanceTimersByTimeAsync(10);
    expect(pi.sent.filter((m) => m.customType === "workflow:complete")).toHaveLength(0);
    await pi.emit("agent_settled", { aborted: false });
    await pi.emit("agent_settled", { aborted: false });
    expect(pi.sent.filter((m) => m.customType === "workflow:complete")).toHaveLength(1);
  });

  it("a run that ended but was never announced (killed after the last step) is announced once at the next start", async () => {
    vi.useFakeTimers();
    const { pi } = await started();
    await finish(pi);
    const again = loadExtension(project, { branch: [...pi.branch] });
    await again.pi.emit("session_start", { reason: "startup" });
    await vi.advanceTimersByTimeAsync(0);
    expect(again.pi.sent.filter((m) => m.customType === "workflow:complete")).toHaveLength(1);
    const third = loadExtension(project, { branch: [...again.pi.branch] });
    await third.pi.emit("session_start", { reason: "startup" });
    await vi.advanceTimersByTimeAsync(10);
    expect(third.pi.sent).toHaveLength(0);
  });

  it("the status is cleared when the run ends", async () => {
    const { pi } = await started();
    await finish(pi);
    expect(pi.statuses.at(-1)).toBeUndefined();
    expect(pi.widgets.get("workflow-phases")).toBeUndefined();
  });
});

describe("turn_end", () => {
  it("1.5.x: after a phase change inside a run, the boundary gets the new context once, and the tool result stays short", async () => {
    const { pi } = await started({ settledHost: true });
    await pi.emit("before_agent_start", {});
    expect(await answered(pi.emit("turn_end", { entries: [] }))).toEqual([]);
    const r = await pi.step({ action: "next" });
    expect(resultText(r)).toBe("✓ Advanced: Plan → 🧪 Test (then 🔍 Review)\n\nThe new phase's context follows as a workflow message.");
    const [boundary] = (await answered(pi.emit("turn_end", { entries: [] }))) as [{ entries: Array<{ type: string; customType: string; content: string; display: boolean }> }];
    expect(boundary.entries).toHaveLength(1);
    expect(boundary.entries[0]).toMatchObject({ type: "custom_message", customType: "workflow:context", display: false });
    expect(boundary.entries[0]?.content).toContain("[Workflow path: Ship a change > Check ▸ 🧪 Test]");
    expect(await answered(pi.emit("turn_end", { entries: [] }))).toEqual([]);
  });

  it("0.73.1: turn_end returns nothing (its events carry no entries) and the tool result carries the context", async () => {
    const { pi } = await started();
    const r = await pi.step({ action: "next" });
    expect(resultText(r)).toContain("[Workflow path: Ship a change > Check ▸ 🧪 Test]");
    expect(await answered(pi.emit("turn_end", {}))).toEqual([]);
    expect(pi.statuses.at(-1)).toBe("Ship a change > Check [2/3] > 🧪 Test [1/2]");
  });

  it("after a restart, the first context says it is current even if a workflow_step result is missing", async () => {
    const { pi } = await started();
    await pi.step({ action: "next" });
    const again = loadExtension(project, { branch: [...pi.branch] });
    await again.pi.emit("session_start", { reason: "startup" });
    const [first] = (await again.pi.emit("before_agent_start", {})) as [{ message: { content: string } }];
    expect(first.message.content).toContain("pi was restarted. This is the workflow's current state");
    const [second] = (await again.pi.emit("before_agent_start", {})) as [{ message: { content: string } }];
    expect(second.message.content).not.toContain("pi was restarted");
  });
});
