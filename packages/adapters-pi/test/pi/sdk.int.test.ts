/**
 * Integration through pi 0.73.1's SDK and its faux model provider: the extension factory loaded in-process,
 * a nested workflow walked phase by phase, a blocked tool refused with the templated reason, the context
 * injected, completion sent once, and the state following a move back in the session tree.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fauxAssistantMessage, fauxText, fauxToolCall, registerFauxProvider, type Context } from "@mariozechner/pi-ai";
import { AuthStorage, createAgentSession, DefaultResourceLoader, ModelRegistry, SessionManager, SettingsManager } from "@mariozechner/pi-coding-agent";
import * as path from "node:path";
import { createWorkflowExtension } from "../../src/pi/index.js";
import { tempProject } from "./helpers/setup.js";

let project: ReturnType<typeof tempProject>;
beforeEach(() => {
  project = tempProject();
});
afterEach(() => project.cleanup());

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((c: { text?: string }) => c.text ?? "").join("");
  return "";
}

async function until(check: () => boolean, label: string): Promise<void> {
  const end = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("pi 0.73.1 SDK", () => {
  it("walks a nested workflow with the faux model, and the state follows the session tree", async () => {
    const faux = registerFauxProvider();
    const seen: Array<Pick<Context, "messages">> = [];
    const step = (reply: () => ReturnType<typeof fauxAssistantMessage>) => (context: Context) => {
      seen.push({ messages: JSON.parse(JSON.stringify(context.messages)) as Context["messages"] }); // tools hold functions
      return reply();
    };
    faux.setResponses([
      step(() => fauxAssistantMessage(fauxToolCall("write", { path: "x.md", content: "x" }), { stopReason: "toolUse" })),
      step(() => fauxAssistantMessage(fauxToolCall("workflow_step", { action: "next", summary: "planned" }), { stopReason: "toolUse" })),
      step(() => fauxAssistantMessage(fauxToolCall("workflow_step", { action: "next" }), { stopReason: "toolUse" })),
      step(() => fauxAssistantMessage(fauxToolCall("workflow_step", { action: "next" }), { stopReason: "toolUse" })),
      step(() => fauxAssistantMessage(fauxToolCall("workflow_step", { action: "next" }), { stopReason: "toolUse" })),
      step(() => fauxAssistantMessage(fauxText("All done."))),
    ]);
    try {
      const model = faux.getModel();
      const authStorage = AuthStorage.inMemory();
      authStorage.setRuntimeApiKey(model.provider, "x");
      const modelRegistry = ModelRegistry.inMemory(authStorage);
      const settingsManager = SettingsManager.inMemory();
      const agentDir = path.join(project.root, "agent");
      const extension = createWorkflowExtension({ roots: () => ({ global: project.global, project: project.workflows }), planRoot: false, countdownMs: 60_000 });
      const resourceLoader = new DefaultResourceLoader({ cwd: project.cwd, agentDir, settingsManager, extensionFactories: [extension], noSkills: true, noContextFiles: true, noPromptTemplates: true, noThemes: true });
      await resourceLoader.reload();
      const sessionManager = SessionManager.inMemory(project.cwd);
      const { session } = await createAgentSession({ cwd: project.cwd, agentDir, authStorage, modelRegistry, model, resourceLoader, sessionManager, settingsManager });
      await session.bindExtensions({});
      await session.prompt("/workflow ship Add a flag");
      const completions = () => sessionManager.getEntries().filter((e) => e.type === "custom_message" && (e as { customType?: string }).customType === "workflow:complete");
      await until(() => completions().length === 1, "the completion message");
      await new Promise((r) => setTimeout(r, 100));
      expect(completions()).toHaveLength(1);

      // The context of the first phase went in before the first request; the write, hidden by the phase
      // (setActiveTools), was refused by the host (the templated reason covers a tool someone re-enabled).
      const first = seen[0]?.messages.map((m) => textOf((m as { content?: unknown }).content)).join("\n") ?? "";
      expect(first).toContain("[Workflow path: Ship a change ▸ 📋 Plan]");
      const afterWrite = seen[1]?.messages.at(-1) as { role: string; content: unknown; isError?: boolean };
      expect(afterWrite.role).toBe("toolResult");
      expect(afterWrite.isError).toBe(true);
      expect(textOf(afterWrite.content)).toMatch(/Tool write not found|\[workflow\] The tool "write" is blocked during the Plan phase\./);
      // Each workflow_step result carries the next phase, through the sub-workflow and out of it.
      const results = seen.slice(2).map((c) => textOf((c.messages.at(-1) as { content?: unknown }).content).split("\n")[0]);
      expect(results).toEqual([
        "✓ Advanced: Plan → 🧪 Test (then 🔍 Review)",
        "✓ Advanced: Test → 🔍 Review (then 📝 Report)",
        "✓ Left sub-workflow: Review → 📝 Report (last phase: when this phase is finished, call workflow_step next)",
        expect.stringMatching(/^✓ Report → DONE/),
      ]);

      // Back in the tree to where the run was in Test: the state follows, and the next prompt gets Test's context.
      const states = sessionManager.getBranch().filter((e) => e.type === "custom" && (e as { customType?: string }).customType === "workflow:state");
      const atTest = states.find((e) => ((e as { data: { currentPath: unknown[] } }).data.currentPath.length === 2));
      expect(atTest).toBeDefined();
      await session.navigateTree(atTest?.id as string, { summarize: false });
      faux.setResponses([step(() => fauxAssistantMessage(fauxText("Back in Test.")))]);
      await session.prompt("Where are we?");
      await until(() => !session.isStreaming, "idle");
      const back = seen.at(-1)?.messages.map((m) => textOf((m as { content?: unknown }).content)).join("\n") ?? "";
      expect(back).toContain("[Workflow path: Ship a change > Check ▸ 🧪 Test]");
      session.dispose();
    } finally {
      faux.unregister();
    }
  }, 60_000);
});
