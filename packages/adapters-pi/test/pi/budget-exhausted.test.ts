/**
 * Issue 21 in pi (typed fake host): what an exhausted budget does, as the definition says. `pause` (default): the
 * person resumes with a raised budget (`/workflow-resume <id> turns=4`) and the run goes on until the raised limit;
 * `fail`: the run ends failed with the reason; `ask`: pi's dialog offers raise / pause / fail (paused when there is
 * no dialog). Bad raise arguments are refused naming the field and value.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { endTurn, loadExtension, tempProject } from "./helpers/setup.js";

let project: ReturnType<typeof tempProject>;
beforeEach(() => {
  project = tempProject();
});
afterEach(() => project.cleanup());

function workflow(onExhausted: string): void {
  const dir = path.join(project.workflows, "budgeted");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "workflow.yaml"), `name: "Budgeted"\nbudgets:\n  turns: 2\n  onExhausted: ${onExhausted}\nphases:\n  - work.md\n`);
  fs.writeFileSync(path.join(dir, "work.md"), "---\nid: work\nname: Work\n---\nWork.\n");
}

type Pi = ReturnType<typeof loadExtension>["pi"];
const status = (pi: Pi) => (pi.branch.filter((e) => e.customType === "workflow:state").at(-1)?.data as { status: string; failureReason?: string } | undefined);

async function started(onExhausted: string, hasUI = true): Promise<Pi> {
  workflow(onExhausted);
  const { pi } = loadExtension(project, { hasUI });
  await pi.emit("session_start", {});
  await pi.command("workflow", "budgeted Count");
  return pi;
}

describe("pi: an exhausted budget", () => {
  it("pause: /workflow-resume <id> turns=4 raises the budget and the run goes on until the raised limit", async () => {
    const pi = await started("pause");
    await endTurn(pi);
    expect(pi.widgets.get("workflow-budget")).toEqual(["Budget left:", "  1 turns"]);
    await endTurn(pi);
    expect(status(pi)?.status).toBe("paused");
    expect(pi.notices.at(-1)?.text).toContain("the workflow Budgeted's budget of 2 turns is used up (2 used)");
    expect(pi.notices.at(-1)?.text).toContain("add e.g. turns=60 to raise a budget");
    await pi.command("workflow-resume", "run00001 turns=4");
    expect(status(pi)?.status).toBe("running");
    await endTurn(pi);
    expect(status(pi)?.status).toBe("running");
    await endTurn(pi);
    expect(status(pi)?.status).toBe("paused");
    expect(pi.notices.at(-1)?.text).toContain("budget of 4 turns is used up (4 used)");
  });

  it("pause: resuming without a raise pauses again at the next turn (the budget is still used up)", async () => {
    const pi = await started("pause");
    await endTurn(pi);
    await endTurn(pi);
    await pi.command("workflow-resume", "");
    expect(status(pi)?.status).toBe("running");
    await endTurn(pi);
    expect(status(pi)?.status).toBe("paused");
  });

  it("refuses a raise that is not a budget or not a number ≥ 0, and keeps the run paused", async () => {
    const pi = await started("pause");
    await endTurn(pi);
    await endTurn(pi);
    await pi.command("workflow-resume", "run00001 turns=-3");
    expect(pi.notices.at(-1)).toMatchObject({ level: "error", text: expect.stringContaining('budget turns="-3" is not valid') });
    await pi.command("workflow-resume", "run00001 loops=3");
    expect(pi.notices.at(-1)?.text).toContain('budget "loops" is not a budget; write key=value with a key among turns, toolCalls, tokens, cost, wallTimeMs');
    expect(status(pi)?.status).toBe("paused");
  });

  it("fail: the run ends failed with the reason; its tools are no longer refused as paused", async () => {
    const pi = await started("fail");
    await endTurn(pi);
    await endTurn(pi);
    expect(status(pi)).toMatchObject({ status: "failed", failureReason: "the workflow Budgeted's budget of 2 turns is used up (2 used)" });
    expect(pi.notices.at(-1)).toMatchObject({ level: "error", text: expect.stringContaining("failed: the workflow Budgeted's budget") });
  });

  it("ask: the person raises it in pi's dialog and the run goes on; fail and pause are the other answers", async () => {
    const pi = await started("ask", true);
    pi.selectAnswers.push("Raise it to 4 turns and go on");
    await endTurn(pi);
    await endTurn(pi);
    expect(pi.selects.at(-1)).toEqual({ title: "the workflow Budgeted's budget of 2 turns is used up (2 used). What now?", options: ["Raise it to 4 turns and go on", "Pause the run", "Fail the run"] });
    expect(status(pi)?.status).toBe("running");
    await endTurn(pi);
    pi.selectAnswers.push("Fail the run");
    await endTurn(pi);
    expect(status(pi)).toMatchObject({ status: "failed", failureReason: expect.stringContaining("budget of 4 turns is used up") });
  });

  it("ask without a dialog (print mode) pauses and says no one was asked", async () => {
    const pi = await started("ask", false);
    await endTurn(pi);
    await endTurn(pi);
    expect(status(pi)?.status).toBe("paused");
    const counts = pi.branch.filter((e) => e.customType === "workflow:controls").at(-1)?.data as { pausedFor?: string };
    expect(counts.pausedFor).toBe("the workflow Budgeted's budget of 2 turns is used up (2 used) (no one to ask here (no dialog): paused)");
  });
});
