/**
 * The tools a phase offers (active-tools.ts) on the fake host, which has pi 1.5.x's getActiveTools/setActiveTools:
 * phase by phase, and the race the commit order closes: a state change narrows or restores the active tools before
 * its plan-folder write ends, so a prompt sent while that write is slow reaches the model with the new phase's
 * tools. The write is held open by a gate, so the race is the same on every run.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { PlanStore, StoreLock } from "../../src/index.js";
import { createFsPlanStore } from "../../src/store/plan-store.js";
import { loadExtension, tempProject } from "./helpers/setup.js";

const projects: Array<{ cleanup: () => void }> = [];
afterEach(() => projects.splice(0).forEach((p) => p.cleanup()));

const sorted = (names: readonly string[]) => [...names].sort();
// pi's built-in tools beyond its four defaults (as with `--tools read,bash,edit,write,grep,find,ls`), so that the
// Plan phase (write and edit blacklisted) and the Test phase (read and bash whitelisted) offer different sets.
const BUILTINS = ["read", "bash", "edit", "write", "grep", "find", "ls"];
const SESSION_SET = sorted([...BUILTINS, "workflow_step"]);
const PLAN_SET = ["bash", "find", "grep", "ls", "read", "workflow_step"];
const TEST_SET = ["bash", "read", "workflow_step"];

/** A store whose metadata writes wait while the gate is closed; `entered` resolves when one is waiting there. */
function gatedStore(cwd: string) {
  let open = true;
  let release: () => void = () => undefined;
  let entered: () => void = () => undefined;
  const gate = {
    writes: 0,
    close(): Promise<void> {
      open = false;
      const passed = new Promise<void>((r) => (release = r));
      const waiting = new Promise<void>((r) => (entered = r));
      gate.passed = passed;
      return waiting;
    },
    open(): void {
      open = true;
      release();
    },
    passed: Promise.resolve(),
  };
  const wrap = (store: PlanStore): PlanStore =>
    new Proxy(store, {
      get(target, prop, receiver) {
        if (prop === "writeMetadata") {
          return async (...args: Parameters<PlanStore["writeMetadata"]>) => {
            gate.writes++;
            if (!open) {
              entered();
              await gate.passed;
            }
            return target.writeMetadata(...args);
          };
        }
        if (prop === "lock") {
          return async (...args: Parameters<PlanStore["lock"]>) => {
            const r = await target.lock(...args);
            if (!r.ok) return r;
            const lease = r.lock.store;
            const lock = new Proxy(r.lock, { get: (l, p, rv) => (p === "store" ? (lease === undefined ? undefined : wrap(lease)) : Reflect.get(l, p, rv)) }) as StoreLock;
            return { ...r, lock };
          };
        }
        const value = Reflect.get(target, prop, receiver) as unknown;
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  return { store: wrap(createFsPlanStore({ repoRoot: cwd })), gate };
}

describe("phases and the active tools (fake host with getActiveTools/setActiveTools)", () => {
  it("Plan hides write/edit, Test offers only its whitelist, and the end restores the session's set", async () => {
    const project = tempProject();
    projects.push(project);
    const { pi } = loadExtension(project, { builtinTools: BUILTINS });
    await pi.emit("session_start", {});
    expect(sorted(pi.activeTools)).toEqual(SESSION_SET);
    await pi.command("workflow", "ship Add a flag");
    expect(sorted(pi.activeTools)).toEqual(PLAN_SET);
    await pi.step({ action: "next" });
    expect(sorted(pi.activeTools)).toEqual(TEST_SET);
    await pi.command("cancel-workflow");
    expect(sorted(pi.activeTools)).toEqual(SESSION_SET);
    // A set the host was given names only tools it has (unknown names are ignored, as pi 1.5.x does).
    pi.api.setActiveTools?.(["read", "no-such-tool"]);
    expect(pi.activeTools).toEqual(["read"]);
  });

  it("a phase change sets the active tools before its plan-folder write ends (a prompt sent meanwhile sees them)", async () => {
    const project = tempProject();
    projects.push(project);
    const { store, gate } = gatedStore(project.cwd);
    const { pi } = loadExtension(project, { builtinTools: BUILTINS, options: { planRoot: "ai_plan", store: () => store } });
    await pi.emit("session_start", {});
    await pi.command("workflow", "ship Add a flag");
    expect(gate.writes).toBeGreaterThan(0); // the run lives in the plan folder: every change writes it
    expect(sorted(pi.activeTools)).toEqual(PLAN_SET);

    const waiting = gate.close();
    const moved = pi.step({ action: "next" });
    await waiting; // the write of the Test phase's state is held open now
    // Before (tools refreshed after the write), this was still the Plan phase's set (grep, find, ls offered).
    expect(sorted(pi.activeTools)).toEqual(TEST_SET);
    gate.open();
    expect(await moved).not.toHaveProperty("error");

    const again = gate.close();
    const cancelled = pi.command("cancel-workflow");
    await again;
    expect(sorted(pi.activeTools)).toEqual(SESSION_SET);
    gate.open();
    await cancelled;
    await pi.emit("session_shutdown", {}); // lets the run's lock go before the folder is removed
  });
});
