/**
 * Issue 21 in pi (typed fake host, real fs store and locks): `/workflow-approve` in a session that only shows a run
 * (another session drives it and holds its lock) is filed through the run's store, as `phasekit approve` files
 * one from another process, and the session that drives the run takes it at its next `next`. Before, the decision
 * stayed in the watching pi process, where no `next` of its own may move the run: the holder never saw it.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { resultText } from "./helpers/fake-pi.js";
import { loadExtension, tempProject, WAIT } from "./helpers/setup.js";

let project: ReturnType<typeof tempProject>;
beforeEach(() => {
  project = tempProject();
  const dir = path.join(project.workflows, "gated");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "workflow.yaml"), 'name: "Gated"\nphases:\n  - build.md\n  - ship.md\n  - done.md\n');
  fs.writeFileSync(path.join(dir, "build.md"), "---\nid: build\nname: Build\n---\nBuild.\n");
  fs.writeFileSync(
    path.join(dir, "ship.md"),
    "---\nid: ship\nname: Ship\ngates:\n  approve:\n    prompt: \"Ship it?\"\n    schema: { type: object, properties: { channel: { enum: [beta, stable] } }, required: [channel] }\n  onReject: build\n---\nShip.\n",
  );
  fs.writeFileSync(path.join(dir, "done.md"), "---\nid: done\nname: Done\n---\nAnnounce {approval}.\n");
});
afterEach(() => project.cleanup());

const withPlans = { options: { planRoot: "plans" }, hasUI: true };

describe("pi: /workflow-approve from a session that only shows the run", () => {
  it("is filed in the run's store; the session driving the run takes it at next", async () => {
    const a = loadExtension(project, withPlans);
    await a.pi.emit("session_start", {});
    await a.pi.command("workflow", "gated Ship it");
    await a.pi.step({ action: "next" });
    expect(await a.pi.step({ action: "next" })).toMatchObject({ error: expect.stringContaining("waits for a person's approval") });
    const id = fs.readdirSync(path.join(project.cwd, "plans"))[0] as string;

    const b = loadExtension(project, { ...withPlans, branch: [...a.pi.branch] });
    await b.pi.emit("session_start", { reason: "startup" });
    await vi.waitFor(() => expect(b.pi.notices.at(-1)?.text).toContain(`run ${id} is being driven elsewhere`), WAIT);
    const told = b.pi.userMessages.length;
    await b.pi.command("workflow-approve", '{"channel":"stable"}');
    expect(b.pi.notices.at(-1)?.text).toBe(`Approved Ship: filed in run ${id}'s store; the session that drives the run takes it at its next workflow_step next.`);
    // The watching session's agent may not move the run: it is not told to call next.
    expect(b.pi.userMessages.length).toBe(told);
    const filed = JSON.parse(fs.readFileSync(path.join(project.cwd, "plans", id, "approve-request.json"), "utf8")) as Record<string, unknown>;
    expect(filed).toMatchObject({ signal: "approve", reason: "approved in pi", approval: { name: "ship", decision: "approve", data: { channel: "stable" } } });

    const moved = resultText(await a.pi.step({ action: "next" }));
    expect(moved).toMatch(/^✓ Advanced: Ship → Done/);
    expect(moved).toContain('Announce {"channel":"stable"}.');
    expect(fs.existsSync(path.join(project.cwd, "plans", id, "approve-request.json"))).toBe(false);
    await a.pi.emit("session_shutdown", {});
    await b.pi.emit("session_shutdown", {});
  });

  it("a rejection filed from the watching session routes the holder's run to onReject", async () => {
    const a = loadExtension(project, withPlans);
    await a.pi.emit("session_start", {});
    await a.pi.command("workflow", "gated Ship it");
    await a.pi.step({ action: "next" });
    await a.pi.step({ action: "next" });
    const id = fs.readdirSync(path.join(project.cwd, "plans"))[0] as string;
    const b = loadExtension(project, { ...withPlans, branch: [...a.pi.branch] });
    await b.pi.emit("session_start", { reason: "startup" });
    await vi.waitFor(() => expect(b.pi.notices.at(-1)?.text).toContain("is being driven elsewhere"), WAIT);
    await b.pi.command("workflow-approve", "reject not yet");
    expect(b.pi.notices.at(-1)?.text).toContain(`Rejected Ship: filed in run ${id}'s store`);
    const back = resultText(await a.pi.step({ action: "next" }));
    expect(back).toMatch(/^↩ Ship → Build: its approval was rejected/);
    expect(back).toContain("not yet");
    await a.pi.emit("session_shutdown", {});
    await b.pi.emit("session_shutdown", {});
  });
});
