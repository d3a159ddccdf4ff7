/**
 * Issue 21 in pi (typed fake host): a person decides an approve gate from pi itself with /workflow-approve
 * (inline JSON or "reject <reason>", or pi's select dialog), on a run with no plan folder (no store: `phasekit
 * approve` cannot reach it). The payload is checked against the gate's schema; a rejection routes to onReject.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resultText } from "./helpers/fake-pi.js";
import { loadExtension, tempProject } from "./helpers/setup.js";

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

async function atShip() {
  const { pi } = loadExtension(project, { hasUI: true }); // planRoot: false, no store
  await pi.emit("session_start", {});
  await pi.command("workflow", "gated Ship it");
  await pi.step({ action: "next" });
  const waiting = await pi.step({ action: "next" });
  expect("error" in waiting && waiting.error).toContain("A person approves in pi with /workflow-approve");
  return pi;
}

describe("pi: /workflow-approve", () => {
  it("approves with an inline payload checked against the schema; the next phase gets it as {approval}", async () => {
    const pi = await atShip();
    await pi.command("workflow-approve", '{"channel":"nightly"}');
    expect(pi.notices.at(-1)).toMatchObject({ level: "error", text: expect.stringContaining("payload.channel does not match the approval's schema") });
    expect(await pi.step({ action: "next" })).toMatchObject({ error: expect.stringContaining("waits for a person's approval") });
    await pi.command("workflow-approve", '{"channel":"stable"}');
    expect(pi.userMessages.at(-1)).toBe("The person approved phase Ship. Call workflow_step next to go on.");
    const moved = resultText(await pi.step({ action: "next" }));
    expect(moved).toMatch(/^✓ Advanced: Ship → Done/);
    expect(moved).toContain('Announce {"channel":"stable"}.');
  });

  it("rejects from pi's select dialog; the run goes where onReject sends it, and the decision is used once", async () => {
    const pi = await atShip();
    pi.selectAnswers.push("Reject");
    await pi.command("workflow-approve", "");
    expect(pi.selects.at(-1)).toEqual({ title: "Ship: Ship it?", options: ["Approve", "Reject"] });
    const back = resultText(await pi.step({ action: "next" }));
    expect(back).toMatch(/^↩ Ship → Build: its approval was rejected/);
    expect(back).toContain("phase Ship was rejected: rejected in pi");
    await pi.step({ action: "next" });
    expect(await pi.step({ action: "next" })).toMatchObject({ error: expect.stringContaining("waits for a person's approval") });
  });

  it("says so when no phase waits for an approval", async () => {
    const { pi } = loadExtension(project, { hasUI: true });
    await pi.emit("session_start", {});
    await pi.command("workflow", "gated Ship it");
    await pi.command("workflow-approve", "reject no");
    expect(pi.notices.at(-1)?.text).toContain("no phase of a running workflow waits for an approval here");
  });
});
