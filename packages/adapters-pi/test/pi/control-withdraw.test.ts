/**
 * The pi extension as a run's holder: a pause withdrawn after the extension read it at a step boundary and
 * before it acted on it leaves the run running (the withdrawal was acknowledged), the same rule as runWorkflow's
 * (run/control-requests.ts `takeRequest`). The withdrawal lands at that moment through the store's readControl.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadExtension, tempProject } from "./helpers/setup.js";
import { createFsPlanStore } from "../../src/store/plan-store.js";
import { hooked } from "../contract/withdraw-race-cases.js";

let project: ReturnType<typeof tempProject>;
beforeEach(() => {
  project = tempProject();
});
afterEach(() => project.cleanup());

const readMeta = (id: string) => JSON.parse(fs.readFileSync(path.join(project.cwd, "plans", id, "workflow.json"), "utf8")) as { status: string; state: { currentPath: Array<{ phaseIndex: number }> } };

describe("pi: a pause withdrawn while the extension takes it", () => {
  it("does not pause the run once the withdrawal was acknowledged; the step goes on", async () => {
    const other = createFsPlanStore({ repoRoot: project.cwd, planRoot: "plans" });
    const withdrawals: unknown[] = [];
    const store = (cwd: string) =>
      hooked(createFsPlanStore({ repoRoot: cwd, planRoot: "plans" }), {
        afterRead: async (request) => {
          if (withdrawals.length === 0) withdrawals.push(await other.withdrawControl("run00001", request));
        },
      });
    const { pi } = loadExtension(project, { options: { planRoot: "plans", store } });
    await pi.emit("session_start", {});
    await pi.command("workflow", "ship Add a flag");
    const filed = await other.requestControl("run00001", "pause", { reason: "lunch" });
    expect(filed.ok).toBe(true);
    await pi.step({ action: "next" });
    expect(withdrawals).toEqual([{ ok: true, withdrawn: true }]);
    expect(readMeta("run00001")).toMatchObject({ status: "running" });
    expect(readMeta("run00001").state.currentPath.map((s) => s.phaseIndex)).toEqual([1, 0]);
    await pi.emit("session_shutdown", {});
    await other.close();
  });
});
