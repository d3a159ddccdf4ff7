/** The countdown and not-done reminders: when they fire, what cancels them, and the cap without progress. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { loadExtension, tempProject } from "./helpers/setup.js";

let project: ReturnType<typeof tempProject>;
beforeEach(() => {
  project = tempProject();
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
  project.cleanup();
});

const stop = { messages: [{ role: "assistant", stopReason: "stop" }] };

async function started(opts: Parameters<typeof loadExtension>[1] = {}) {
  const l = loadExtension(project, opts);
  await l.pi.emit("session_start", {});
  await l.pi.command("workflow", "ship Add a flag");
  l.pi.userMessages.length = 0;
  return l.pi;
}

async function agentStops(pi: Awaited<ReturnType<typeof started>>, end = stop) {
  await pi.emit("agent_end", end);
  await vi.advanceTimersByTimeAsync(0);
}

describe("not-done reminder", () => {
  it("with UI: a 3 s countdown widget, then the reminder with the phase instructions", async () => {
    const pi = await started();
    await agentStops(pi);
    expect(pi.widgets.get("workflow-countdown")?.[0]).toContain("reminding the agent in 3s");
    await vi.advanceTimersByTimeAsync(1000);
    expect(pi.widgets.get("workflow-countdown")?.[0]).toContain("in 2s");
    expect(pi.userMessages).toEqual([]);
    await vi.advanceTimersByTimeAsync(2000);
    expect(pi.widgets.get("workflow-countdown")).toBeUndefined();
    expect(pi.userMessages).toHaveLength(1);
    expect(pi.userMessages[0]).toContain("The Ship a change is still active. Current phase: 📋 Plan.");
    expect(pi.userMessages[0]).toContain("Do not edit files in this phase.");
  });

  it("without UI: a countdown message, then the reminder", async () => {
    const pi = await started({ hasUI: false });
    await agentStops(pi);
    expect(pi.sent.filter((m) => m.customType === "workflow:countdown")).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(3000);
    expect(pi.userMessages).toHaveLength(1);
  });

  it.each([
    ["user input", async (pi: Awaited<ReturnType<typeof started>>) => void (await pi.emit("input", { text: "wait", source: "interactive" }))],
    ["/workflow-status", async (pi: Awaited<ReturnType<typeof started>>) => pi.command("workflow-status")],
    ["/cancel-workflow", async (pi: Awaited<ReturnType<typeof started>>) => pi.command("cancel-workflow")],
    ["workflow_step", async (pi: Awaited<ReturnType<typeof started>>) => void (await pi.step({ action: "status" }))],
    ["a session change", async (pi: Awaited<ReturnType<typeof started>>) => void (await pi.emit("session_tree", {}))],
  ])("is cancelled by %s", async (_name, act) => {
    const pi = await started();
    await agentStops(pi);
    await act(pi);
    await vi.advanceTimersByTimeAsync(5000);
    expect(pi.userMessages).toEqual([]);
    expect(pi.widgets.get("workflow-countdown")).toBeUndefined();
  });

  it("stops after three reminders without progress, says so once, and starts again after progress", async () => {
    const pi = await started();
    for (let i = 0; i < 5; i++) {
      await agentStops(pi);
      await vi.advanceTimersByTimeAsync(3000);
    }
    expect(pi.userMessages).toHaveLength(3);
    expect(pi.sent.filter((m) => m.customType === "workflow:notice" && m.content.includes("stopped reminding"))).toHaveLength(1);
    await pi.step({ action: "next" });
    await agentStops(pi);
    await vi.advanceTimersByTimeAsync(3000);
    expect(pi.userMessages).toHaveLength(4);
    expect(pi.userMessages[3]).toContain("Current phase: 🧪 Test.");
  });

  it("pauses on an aborted or errored run", async () => {
    const pi = await started();
    await agentStops(pi, { messages: [{ role: "assistant", stopReason: "aborted" }] });
    await agentStops(pi, { messages: [{ role: "assistant", stopReason: "error" }] });
    await vi.advanceTimersByTimeAsync(5000);
    expect(pi.userMessages).toEqual([]);
    expect(pi.notices.map((n) => n.text)).toEqual([
      "[phasekit] the agent was stopped; the workflow waits in Plan. Send a message to go on.",
      "[phasekit] the agent ended with an error; the workflow waits in Plan. Send a message to go on.",
    ]);
  });

  it("1.5.x: continues from agent_settled, and an aborted settle pauses", async () => {
    const pi = await started({ settledHost: true });
    await agentStops(pi);
    await vi.advanceTimersByTimeAsync(5000);
    expect(pi.userMessages).toEqual([]);
    await pi.emit("agent_settled", { aborted: true });
    await vi.advanceTimersByTimeAsync(5000);
    expect(pi.userMessages).toEqual([]);
    await pi.emit("agent_settled", { aborted: false });
    await vi.advanceTimersByTimeAsync(3000);
    expect(pi.userMessages).toHaveLength(1);
  });

  it("a timer armed before a session change never touches the old ctx", async () => {
    const pi = await started();
    await agentStops(pi);
    await vi.advanceTimersByTimeAsync(1000); // mid-countdown, the widget is up
    pi.staleAll(); // pi replaced the session: every earlier ctx now throws
    await pi.emit("session_start", { reason: "new" });
    await vi.advanceTimersByTimeAsync(5000);
    expect(pi.userMessages).toEqual([]);
    expect(pi.staleUses).toEqual([]);
    expect(pi.widgets.get("workflow-countdown")).toBeUndefined(); // cleared through the new session's ctx
  });

  it("1.5.x print and json modes: no reminder (the run ends with its prompt)", async () => {
    const pi = await started({ settledHost: true, hasUI: false });
    pi.mode = "print";
    await pi.emit("agent_settled", { aborted: false });
    await vi.advanceTimersByTimeAsync(5000);
    expect(pi.userMessages).toEqual([]);
    expect(pi.sent.filter((m) => m.customType === "workflow:countdown")).toEqual([]);
    pi.mode = "rpc";
    await pi.emit("agent_settled", { aborted: false });
    await vi.advanceTimersByTimeAsync(3000);
    expect(pi.userMessages).toHaveLength(1);
  });
});
