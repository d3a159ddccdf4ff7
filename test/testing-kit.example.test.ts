/**
 * The testing kit as an extension author uses it (docs/testing.md): imported by package name, from outside the
 * package. A durable job on the memory store (a failed run resumed, its finished step reused), a workflow
 * extension driven through the fake pi host, and the scripted model answering as an OpenAI-compatible server.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { runWorkflow } from "@phasekit/adapters-pi";
import { createWorkflowExtension } from "@phasekit/adapters-pi/pi";
import { createFakePi, createMemoryPlanStore, resultText, startScriptedModel } from "@phasekit/adapters-pi/testing";
import { afterEach, describe, expect, it } from "vitest";

const dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(path.join(tmpdir(), "phasekit-kit-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("@phasekit/adapters-pi/testing", () => {
  it("a job on the memory store: a failed run resumes and reuses its finished step", async () => {
    const store = createMemoryPlanStore();
    const calls: string[] = [];
    let flaky = true;
    const job = () =>
      runWorkflow({ repoRoot: tempDir(), target: "nightly", toolName: "my-extension", store }, async (ctx) => {
        const plan = await ctx.step("plan", { issue: 7 }, () => (calls.push("plan"), { files: ["a.ts"] }));
        return ctx.step("apply", plan, () => {
          calls.push("apply");
          if (flaky) throw new Error("network down");
          return { applied: plan.files.length };
        });
      });
    await expect(job()).rejects.toThrow("network down");
    flaky = false;
    const second = await job();
    expect(second.status === "completed" && second.result).toEqual({ applied: 1 });
    expect(calls).toEqual(["plan", "apply", "apply"]);
  });

  it("a workflow extension in the fake pi host: start, then advance with workflow_step", async () => {
    const cwd = tempDir();
    const folder = path.join(cwd, ".pi", "workflows", "review");
    mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(folder, "workflow.yaml"), "name: Review\nphases:\n  - read.md\n  - report.md\n");
    writeFileSync(path.join(folder, "read.md"), "---\nid: read\nname: Read\n---\nRead the change.\n");
    writeFileSync(path.join(folder, "report.md"), "---\nid: report\nname: Report\n---\nWrite the report.\n");
    const pi = createFakePi({ cwd });
    createWorkflowExtension({ roots: () => ({ global: path.join(cwd, "none"), project: path.join(cwd, ".pi", "workflows") }), planRoot: false })(pi.api);
    await pi.emit("session_start", {});
    await pi.command("workflow", "review Check the flag");
    expect(pi.statuses.at(-1)).toContain("Read");
    expect(resultText(await pi.step({ action: "next" }))).toContain("Report");
  });

  it("the scripted model streams the replies it was given, and records what it was asked", async () => {
    const model = await startScriptedModel();
    try {
      model.push({ text: "hello from the script" });
      const res = await fetch(`${model.baseUrl}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "scripted", stream: true, messages: [{ role: "user", content: "hi" }] }),
      });
      expect(await res.text()).toContain("hello from the script");
      expect(model.requests).toHaveLength(1);
    } finally {
      await model.close();
    }
  });
});
