/**
 * Plan folders with the real fs store: a run is written under its lock; a second session that finds the run
 * live but held elsewhere shows it without moving it; /workflow-resume takes it over once the holder let go.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { resultText } from "./helpers/fake-pi.js";
import { loadExtension, tempProject, WAIT } from "./helpers/setup.js";
import { createFsPlanStore, type PlanStore } from "../../src/store/plan-store.js";

let project: ReturnType<typeof tempProject>;
beforeEach(() => {
  project = tempProject();
});
afterEach(() => project.cleanup());

const withPlans = { options: { planRoot: "plans" } };
const readMeta = (id: string) => JSON.parse(fs.readFileSync(path.join(project.cwd, "plans", id, "workflow.json"), "utf8")) as { status: string; generation: number; state: { currentPath: Array<{ phaseIndex: number }>; completionNotified: boolean } };

describe("plan folders", () => {
  it("uses the injected store (another PlanStore, e.g. PostgreSQL) instead of the default fs store", async () => {
    const used: string[] = [];
    const store = (cwd: string): PlanStore => {
      const inner = createFsPlanStore({ repoRoot: cwd, planRoot: "injected" });
      return new Proxy(inner, {
        get(target, key, receiver) {
          const v = Reflect.get(target, key, receiver) as unknown;
          if (typeof v !== "function") return v;
          return (...args: unknown[]) => {
            used.push(String(key));
            return (v as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      });
    };
    const { pi } = loadExtension(project, { options: { planRoot: "elsewhere", store } });
    await pi.emit("session_start", {});
    await pi.command("workflow", "ship Add a flag");
    expect(used).toContain("lock");
    expect(fs.existsSync(path.join(project.cwd, "injected", "run00001", "workflow.json"))).toBe(true);
    expect(fs.existsSync(path.join(project.cwd, "elsewhere"))).toBe(false);
    await pi.emit("session_shutdown", {});
  });


  it("writes each change of the run to workflow.json, through the end notice", async () => {
    const { pi } = loadExtension(project, withPlans);
    await pi.emit("session_start", {});
    await pi.command("workflow", "ship Add a flag");
    expect(readMeta("run00001")).toMatchObject({ status: "running" });
    await pi.step({ action: "next" });
    expect(readMeta("run00001").state.currentPath.map((s) => s.phaseIndex)).toEqual([1, 0]);
    await pi.command("cancel-workflow");
    expect(readMeta("run00001")).toMatchObject({ status: "cancelled", state: { completionNotified: true } });
    expect(fs.existsSync(path.join(project.cwd, "plans", "run00001", ".lock"))).toBe(false);
  });

  it("a second session shows a run held elsewhere but cannot move it; /workflow-resume takes over after the holder ends", async () => {
    const a = loadExtension(project, withPlans);
    await a.pi.emit("session_start", {});
    await a.pi.command("workflow", "ship Add a flag");

    const b = loadExtension(project, { ...withPlans, branch: [...a.pi.branch] });
    await b.pi.emit("session_start", { reason: "startup" });
    expect(b.pi.statuses.at(-1)).toBe("Ship a change > 📋 Plan [1/3]");
    // The claim is not waited for by session_start: its verdict arrives once the lock was tried.
    await vi.waitFor(() => expect(b.pi.notices.at(-1)?.text).toContain("run run00001 is being driven elsewhere"), WAIT);
    expect(await b.pi.step({ action: "next" })).toMatchObject({ error: expect.stringContaining("driven by another session") });
    await b.pi.command("workflow-resume", "run00001");
    expect(b.pi.notices.at(-1)?.text).toContain("is being driven elsewhere");

    const fresh = loadExtension(project, withPlans);
    await fresh.pi.emit("session_start", {});
    await fresh.pi.command("workflow-resume", "run00001");
    expect(fresh.pi.notices.at(-1)?.text).toContain("is being driven elsewhere");

    await a.pi.step({ action: "next" });
    await a.pi.emit("session_shutdown", {});
    await fresh.pi.command("workflow-resume", "run00001");
    expect(fresh.pi.statuses.at(-1)).toBe("Ship a change > Check [2/3] > 🧪 Test [1/2]");
    expect(fresh.pi.userMessages.at(-1)).toContain("Resume the workflow run run00001");
    expect(resultText(await fresh.pi.step({ action: "next" }))).toContain("🔍 Review");
    expect(readMeta("run00001").state.currentPath.map((s) => s.phaseIndex)).toEqual([1, 1]);
    await fresh.pi.emit("session_shutdown", {});
  });

  it("session_start does not wait for the claim, and nothing moves the run before it settles", async () => {
    const a = loadExtension(project, withPlans);
    await a.pi.emit("session_start", {});
    await a.pi.command("workflow", "ship Add a flag");
    const generation = readMeta("run00001").generation;
    // Session b's claim is still pending when its first move comes: the move waits for it and is refused.
    const b = loadExtension(project, { ...withPlans, branch: [...a.pi.branch] });
    await b.pi.emit("session_start", { reason: "startup" });
    expect(await b.pi.step({ action: "next" })).toMatchObject({ error: expect.stringContaining("driven by another session") });
    expect(readMeta("run00001").generation).toBe(generation);
    await a.pi.emit("session_shutdown", {});
    // A session that starts and ends at once still lets the run go: its release waits for its claim.
    const c = loadExtension(project, { ...withPlans, branch: [...a.pi.branch] });
    await c.pi.emit("session_start", { reason: "startup" });
    await c.pi.emit("session_shutdown", {});
    const d = loadExtension(project, { ...withPlans, branch: [...a.pi.branch] });
    await d.pi.emit("session_start", { reason: "startup" });
    expect(resultText(await d.pi.step({ action: "next" }))).toContain("🧪 Test");
    expect(d.pi.notices).toEqual([]);
    await d.pi.emit("session_shutdown", {});
  });

  it("/workflow-resume names what is wrong: no such run, a finished run", async () => {
    const { pi } = loadExtension(project, withPlans);
    await pi.emit("session_start", {});
    await pi.command("workflow-resume", "nope0000");
    expect(pi.notices.at(-1)?.text).toMatch(/no workflow run nope0000 in .*plans/);
    await pi.command("workflow", "ship Add a flag");
    await pi.command("cancel-workflow");
    await pi.command("workflow-resume", "run00001");
    expect(pi.notices.at(-1)?.text).toContain("has already ended (cancelled)");
  });
});
