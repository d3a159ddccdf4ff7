/**
 * The pi extension as a displaced holder: it took a pause filed from outside, then found it had lost the run, and
 * the store refused to file the pause again for the run's next holder (run/control-requests.ts `takeRequest`, its
 * `notHandedOn` error). The pause is then pending nowhere: the user is told so, with the request and the store's
 * refusal, and neither the tool result nor the status says the run paused. Found at a prompt (`before_agent_start`),
 * the model is told the same instead of the running phase's context.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { workflowError } from "@phasekit/core";
import { loadExtension, tempProject } from "./helpers/setup.js";
import { resultText } from "./helpers/fake-pi.js";
import { createMemoryPlanStore } from "../helpers/memory-plan-store.js";
import type { PlanStore } from "../../src/store/plan-store.js";
import { storeWithLeaseStores } from "./helpers/lease-store.js";

let project: ReturnType<typeof tempProject>;
beforeEach(() => {
  project = tempProject();
});
afterEach(() => project.cleanup());

const REFUSAL = workflowError("store", "WRITE_FAILED", "run run00001: the disk is full", { hint: "free some space" });

/**
 * The extension's store: the lease's clear of a pause displaces the holder once it returned (another process took
 * the run), and the lease's store refuses every request filed through it.
 */
function displacingStore(mem: ReturnType<typeof createMemoryPlanStore>, other: PlanStore): (cwd: string) => PlanStore {
  const lease = (s: PlanStore): PlanStore =>
    Object.create(s, {
      clearControl: {
        value: async (...args: Parameters<PlanStore["clearControl"]>) => {
          const r = await s.clearControl(...args);
          mem.expireLock(args[0]);
          const taken = await other.lock(args[0], { owner: { tool: "b" } });
          if (!taken.ok) throw taken.error;
          return r;
        },
      },
      requestControl: { value: async () => ({ ok: false, error: REFUSAL }) },
    }) as PlanStore;
  return storeWithLeaseStores(mem, mem, lease);
}

/** A session running a workflow over the displacing store, with a pause filed from outside (reason "lunch"). */
async function runWithFiledPause(host: { settledHost?: boolean } = {}) {
  const mem = createMemoryPlanStore();
  const other = mem.reopen();
  const { pi } = loadExtension(project, { ...host, options: { planRoot: "plans", store: displacingStore(mem, other) } });
  await pi.emit("session_start", {});
  await pi.command("workflow", "ship Add a flag");
  pi.userMessages.length = 0;
  expect((await other.requestControl("run00001", "pause", { reason: "lunch" })).ok).toBe(true);
  return { pi, other };
}

describe("pi: a taken pause that could not be handed on to the run's next holder", () => {
  it("is told to the user (request and refusal), and the tool result and status do not say the run paused", async () => {
    const { pi, other } = await runWithFiledPause();

    const result = await pi.step({ action: "next" });
    const said = resultText(result);
    expect(said).toContain("this pause request did not take effect, and this workflow_step call did nothing");
    expect(said.replaceAll("not paused", "")).not.toMatch(/paused/i);
    expect("details" in result ? result.details : undefined).toMatchObject({ status: "running" });
    const notice = pi.notices.find((n) => n.text.includes("lunch"));
    expect(notice).toMatchObject({ level: "error" });
    expect(notice?.text).toContain("WRITE_FAILED: ");
    expect(notice?.text).toContain("the disk is full");
    expect(notice?.text).toContain("phasekit pause run00001");
    expect(pi.statuses.at(-1) ?? "").not.toMatch(/paused/i);
    // "did nothing": the run did not advance, in the session nor in the store.
    const meta = await other.readMetadata("run00001");
    expect(meta.ok && meta.metadata?.state).toMatchObject({ status: "running", currentPath: [{ phaseIndex: 0 }] });
    // Nothing is pending anywhere: the refusal above is why the user has to file it again.
    const pending = await other.readControl("run00001", "pause");
    expect(pending).toMatchObject({ ok: true, request: null });
    await pi.emit("session_shutdown", {});
  });

  it("found at a prompt: the model is told the pause did not take effect, not given the running phase's context", async () => {
    const { pi } = await runWithFiledPause();

    const [r] = (await pi.emit("before_agent_start", { prompt: "go on" })) as [{ message: { customType: string; content: string; display: boolean } } | undefined];
    expect(r?.message).toMatchObject({ customType: "workflow:context", display: false });
    const said = r?.message.content ?? "";
    expect(said).toContain("this pause request did not take effect");
    expect(said).toContain("do not call workflow_step until they say how to go on");
    expect(said).not.toContain("[Workflow path:");
    expect(said.replaceAll("not paused", "")).not.toMatch(/paused/i);
    expect(pi.notices.find((n) => n.text.includes("lunch"))).toMatchObject({ level: "error" });
    // Nor is the running context slipped in at the end of the turn.
    const [turn] = await pi.emit("turn_end", { message: { role: "assistant", content: [] }, toolResults: [], entries: [] } as never);
    expect(turn).toBeUndefined();
    await pi.emit("session_shutdown", {});
  });

  // The model was told to wait for the user: the not-done reminder ("You must NOT stop yet") would say the opposite.
  for (const where of ["prompt", "step", "idle"] as const) {
    it(`found at ${where === "idle" ? "the agent going idle" : `a ${where}`}: no reminder is sent when the agent goes idle, until the user speaks`, async () => {
      const { pi } = await runWithFiledPause({ settledHost: true });
      const countdown = () => pi.widgets.get("workflow-countdown");
      const idle = async () => {
        await pi.emit("agent_end", { messages: [{ role: "assistant", stopReason: "stop" }] });
        await pi.emit("agent_settled", { aborted: false });
      };

      if (where === "prompt") {
        const [r] = (await pi.emit("before_agent_start", { prompt: "go on" })) as [{ message: { content: string } } | undefined];
        expect(r?.message.content).toContain("this pause request did not take effect");
      } else if (where === "step") {
        expect(resultText(await pi.step({ action: "next" }))).toContain("this pause request did not take effect");
      } else {
        await idle();
      }
      expect(pi.notices.find((n) => n.text.includes("lunch"))).toMatchObject({ level: "error" });
      // The idle continuation decides at once (the countdown is shown before any timer runs): none is started.
      await idle();
      expect(countdown()).toBeUndefined();
      await idle();
      expect(countdown()).toBeUndefined();
      expect(pi.userMessages).toEqual([]);

      // The user's next message ends the hold: the run is still running in this session, so idle reminds again.
      await pi.emit("input", { text: "go on", source: "interactive" });
      await idle();
      expect(countdown()?.[0]).toContain("reminding the agent");
      await pi.emit("session_shutdown", {});
    });
  }
});
