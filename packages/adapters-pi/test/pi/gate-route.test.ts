/**
 * Issue 21 in pi (typed fake host): a gate's "no" that the definition routes moves the run through core's `route`.
 * A failing verify with onFail sends the run back (the agent gets the failing output and the phase it is sent to),
 * counted against the scope's maxLoops: at the limit `next` is refused and the run stays. A rejection filed with
 * `requestApproval` (what `phasekit approve --reject` does) sends the run to onReject and is consumed once the
 * route is on disk.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { requestApproval } from "../../src/index.js";
import { resultText } from "./helpers/fake-pi.js";
import { loadExtension, tempProject } from "./helpers/setup.js";

let project: ReturnType<typeof tempProject>;
beforeEach(() => {
  project = tempProject();
  const dir = path.join(project.workflows, "routed");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "workflow.yaml"), 'name: "Routed"\nmaxLoops: 1\nphases:\n  - build.md\n  - test.md\n  - ship.md\n');
  fs.writeFileSync(path.join(dir, "build.md"), "---\nid: build\nname: Build\n---\nBuild it.\n");
  fs.writeFileSync(path.join(dir, "test.md"), "---\nid: test\nname: Test\nemoji: \"🧪\"\ngates:\n  verify:\n    commands: [\"ls tests-pass.txt\"]\n  onFail: build\n---\nTest it.\n");
  fs.writeFileSync(path.join(dir, "ship.md"), "---\nid: ship\nname: Ship\ngates:\n  approve:\n    prompt: \"Ship it?\"\n  onReject: build\n---\nShip it.\n");
});
afterEach(() => project.cleanup());

const lastState = (pi: { branch: Array<{ customType?: string; data?: unknown }> }) =>
  pi.branch.filter((e) => e.customType === "workflow:state").at(-1)?.data as { status: string; loopCount: number; currentPath: Array<{ phaseIndex: number; loops: number }> };

describe("pi: onFail / onReject routing through core", () => {
  it("a failing verify with onFail sends the run back with the output, once per maxLoops; at the limit next is refused and the run stays", async () => {
    const { pi } = loadExtension(project, { options: { planRoot: "ai_plan" } });
    await pi.emit("session_start", {});
    await pi.command("workflow", "routed Make it");
    expect(resultText(await pi.step({ action: "next" }))).toMatch(/^✓ Advanced: Build → 🧪 Test/);
    const back = resultText(await pi.step({ action: "next" }));
    expect(back).toMatch(/^↩ Test → Build: its verify gate failed, so the workflow sends the run back \(then 🧪 Test\)/);
    expect(back).toContain("phase Test cannot be left: the verify command `ls tests-pass.txt` failed.");
    expect(back).toMatch(/tests-pass\.txt'?: No such file or directory/);
    expect(back).not.toContain("Fix it, then call workflow_step next again");
    expect(lastState(pi)).toMatchObject({ status: "running", loopCount: 1, currentPath: [{ phaseIndex: 0, loops: 1 }] });
    await pi.step({ action: "next" });
    const refused = await pi.step({ action: "next" });
    expect(refused).toMatchObject({ error: expect.stringContaining("next refused: phase Test cannot be left") });
    expect("error" in refused && refused.error).toContain('has gone back 1 of 1 allowed time(s) in this scope; onFail "build" is not taken again');
    expect("error" in refused && refused.error).toContain("The run stays in this phase: fix what the verify gate reports here, then call workflow_step next again.");
    expect(lastState(pi)).toMatchObject({ currentPath: [{ phaseIndex: 1, loops: 1 }] });
    fs.writeFileSync(path.join(project.cwd, "tests-pass.txt"), "ok\n");
    expect(resultText(await pi.step({ action: "next" }))).toMatch(/^✓ Advanced: Test → Ship/);
  });

  it("a rejection routes to onReject and is consumed once the route is committed", async () => {
    fs.writeFileSync(path.join(project.cwd, "tests-pass.txt"), "ok\n");
    const { pi } = loadExtension(project, { options: { planRoot: "ai_plan" } });
    await pi.emit("session_start", {});
    await pi.command("workflow", "routed Make it");
    await pi.step({ action: "next" });
    await pi.step({ action: "next" });
    const waiting = await pi.step({ action: "next" });
    expect(waiting).toMatchObject({ error: expect.stringContaining("phase Ship waits for a person's approval: Ship it?") });
    const id = lastState(pi) && fs.readdirSync(path.join(project.cwd, "ai_plan"))[0] as string;
    await requestApproval({ repoRoot: project.cwd, target: id, reason: "the changelog is missing", approval: { decision: "reject", name: "ship" } });
    const back = resultText(await pi.step({ action: "next" }));
    expect(back).toMatch(/^↩ Ship → Build: its approval was rejected, so the workflow sends the run back \(then 🧪 Test\)/);
    expect(back).toContain("phase Ship was rejected: the changelog is missing");
    expect(lastState(pi)).toMatchObject({ status: "running", currentPath: [{ phaseIndex: 0, loops: 1 }] });
    expect(fs.readdirSync(path.join(project.cwd, "ai_plan", id)).filter((f) => f.includes("approve"))).toEqual([]);
  });
});
