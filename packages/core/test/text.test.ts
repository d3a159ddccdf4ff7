import { describe, expect, it } from "vitest";
import { contextPrompt, progressLine } from "../src/present/context-prompt.js";
import { cancelledMessage, completionMessage, endOfRunMessage, failedMessage, initialMessage, notDoneReminder } from "../src/present/messages.js";
import { type ActiveWorkflow } from "../src/transitions/resolve-active.js";
import type { WorkflowRegistry } from "../src/definitions/registry.js";
import type { WorkflowState } from "../src/state/schema.js";
import { statusLine } from "../src/present/status-line.js";
import { PROMPT_VARS, renderTemplate } from "../src/definitions/template.js";
import { checkTool } from "../src/policy/check-tool.js";
import { DEFAULT_ADVANCE_REMINDER, DEFAULT_BLOCK_REASON, DEFAULT_ROLE_INSTRUCTION } from "../src/present/text.js";
import { releaseDefinitions, releaseRegistry } from "../../../examples/release-workflow.js";
import { activeOf, at, deep, registryOf } from "./helpers/core-fixtures.js";

const release = releaseRegistry();

function active(state: WorkflowState, registry: WorkflowRegistry = release): ActiveWorkflow {
  return activeOf(registry, state);
}

describe("renderTemplate", () => {
  const allow = new Set(["a", "b"]);
  it("replaces allowlisted names that have values and leaves everything else as written", () => {
    expect(renderTemplate("{a}-{b}-{c}-{a}", { a: 1, b: "x", c: "no" }, allow)).toBe("1-x-{c}-1");
    expect(renderTemplate("{a} {b}", { a: undefined }, allow)).toBe("{a} {b}");
    expect(renderTemplate("{constructor} {toString} {__proto__}", {}, new Set(["constructor", "toString", "__proto__"]))).toBe("{constructor} {toString} {__proto__}");
    expect(renderTemplate("{ a } {} {a", { a: 1 }, allow)).toBe("{ a } {} {a");
  });
});

describe("status line", () => {
  it("matches the seed's format at depths 1, 2 and 3; a phase without emoji has no leading space", () => {
    expect(statusLine(active(at("release", [["release", 0]])))).toBe("Release Pipeline > 📦 Build [1/3]");
    expect(statusLine(active(at("release", [["release", 1], ["review", 0]])))).toBe("Release Pipeline > Code Review [2/3] > 🔍 Static Analysis [1/2]");
    expect(statusLine(active(at("release", [["release", 1], ["review", 1], ["security", 1]])))).toBe(
      "Release Pipeline > Code Review [2/3] > Security Audit [2/2] > 🔒 Dependency Audit [2/2]",
    );
    expect(statusLine(active(at("flat", [["flat", 1]]), deep))).toBe("Flat > Flat Two [2/2]");
  });
});

describe("tool policy", () => {
  const inStatic = at("release", [["release", 1], ["review", 0]]);
  const inThreat = at("release", [["release", 1], ["review", 1], ["security", 0]]);

  it("a blacklist blocks its tools with the default reason; other tools pass", () => {
    const d = checkTool(release, inStatic, "edit");
    expect(d).toEqual({ ok: true, allowed: false, reason: DEFAULT_BLOCK_REASON.replace("{toolName}", "edit").replace("{phaseName}", "Static Analysis") });
    expect(checkTool(release, inStatic, "read")).toEqual({ ok: true, allowed: true });
  });

  it("a whitelist blocks everything else; workflow_step always passes; no run or a finished run allows all", () => {
    expect(checkTool(release, inThreat, "grep")).toMatchObject({ ok: true, allowed: true });
    expect(checkTool(release, inThreat, "bash")).toMatchObject({ ok: true, allowed: false });
    expect(checkTool(release, inThreat, "workflow_step")).toMatchObject({ ok: true, allowed: true });
    expect(checkTool(release, null, "bash")).toMatchObject({ ok: true, allowed: true });
    expect(checkTool(release, { ...inThreat, status: "completed" }, "bash")).toMatchObject({ ok: true, allowed: true });
  });

  it("an empty whitelist allows only workflow_step; the template gets {allowedTools} for both kinds of list", () => {
    const reg = registryOf({
      w: {
        name: "W",
        blockReasonTemplate: "{workflowName}/{phaseName}: {toolName} not allowed; allowed: {allowedTools}",
        phases: [{ id: "a", name: "A", tools: { whitelist: [] } }, { id: "b", name: "B", tools: { blacklist: ["x", "y"] } }],
      },
    });
    expect(checkTool(reg, at("w", [["w", 0]]), "read")).toEqual({ ok: true, allowed: false, reason: "W/A: read not allowed; allowed: none (only workflow_step)" });
    expect(checkTool(reg, at("w", [["w", 0]]), "workflow_step")).toMatchObject({ ok: true, allowed: true });
    expect(checkTool(reg, at("w", [["w", 1]]), "y")).toEqual({ ok: true, allowed: false, reason: "W/B: y not allowed; allowed: all except: x, y" });
  });
});

describe("context prompt", () => {
  it("has the header, role, task, phase, progress, neighbours, rendered instructions, profiles and reminder", () => {
    const text = contextPrompt(active(at("release", [["release", 1], ["review", 0]], { taskDescription: "Ship it", taskId: "t-9", globalStepCount: 2 })));
    expect(text).toBe(
      [
        "[Workflow path: Release Pipeline > Code Review ▸ 🔍 Static Analysis]",
        DEFAULT_ROLE_INSTRUCTION,
        "Task: Ship it\nTask ID: t-9",
        "Current phase: 🔍 Static Analysis\nProgress: phase 1/2 of Code Review (in Release Pipeline 2/3) · 2 step(s) so far\nPrevious phase: 📦 Build · Next phase: 🛡️ Threat Model",
        "Instructions:\nRun the linters. Next: Threat Model.",
        DEFAULT_ADVANCE_REMINDER,
      ].join("\n\n"),
    );
  });

  it("uses the definition's texts, the innermost one first, and lists profiles", () => {
    const reg = registryOf({
      top: { name: "Top", roleInstruction: "Lead {workflowName} at {phaseName}", advanceReminder: "top reminder", phases: [{ subworkflow: "sub" }] },
      sub: { name: "Sub", show: false, advanceReminder: "Go to {nextPhaseName} after {phaseId}", profiles: [{ name: "p", description: "does p" }], phases: [{ id: "s1", name: "S1", availableProfiles: ["p"] }, { id: "s2", name: "S2" }] },
    });
    const text = contextPrompt(active(at("top", [["top", 0], ["sub", 0]]), reg));
    expect(text).toContain("\n\nLead Top at S1\n\n");
    expect(text).toContain("Profiles for this phase: p\nWorkflow profiles:\n- p: does p");
    expect(text.endsWith("Go to S2 after s1")).toBe(true);
  });

  it("linear progress has no nesting part", () => {
    expect(progressLine(active(at("flat", [["flat", 1]]), deep))).toBe("Progress: phase 2/2 · 10 step(s) so far");
  });
});

describe("messages", () => {
  const done = at("release", [["release", 2]], { status: "completed", taskDescription: "Ship", taskId: "t-1" });

  it("completion: the seed's default with the number of concrete phases", () => {
    const r = completionMessage(release, done);
    expect(r.ok && r.text).toBe("✅ **Release Pipeline Complete**\n\n**Task:** Ship\n**Task ID:** t-1\n**Phases completed:** 5");
  });

  it("cancelled and failed have their own defaults; endOfRunMessage picks by status and refuses a live run", () => {
    const c = endOfRunMessage(release, { ...done, status: "cancelled" });
    expect(c.ok && [c.kind, c.text]).toEqual(["cancelled", "❌ **Release Pipeline Cancelled**\n\n**Task:** Ship\n**Task ID:** t-1"]);
    const f = failedMessage(release, { ...done, status: "failed", failureReason: "disk full" });
    expect(f.ok && f.text).toContain("**Reason:** disk full");
    const live = endOfRunMessage(release, { ...done, status: "running" });
    expect(live.ok || live.error.code).toBe("NOT_FINISHED");
    const gone = cancelledMessage(registryOf({ x: { name: "X", phases: [{ id: "a", name: "A" }] } }), done);
    expect(gone.ok || gone.error.code).toBe("MISSING_DEFINITION");
  });

  it("not-done reminder: the seed's default, with the phase instructions rendered first", () => {
    const text = notDoneReminder(active(at("release", [["release", 0]], { taskId: "t-2" })));
    expect(text.startsWith("⚠️ The Release Pipeline is still active. Current phase: 📦 Build.\n\nYou must NOT stop yet.")).toBe(true);
    expect(text).toContain("Current phase instructions:\nBuild Release Pipeline for task t-2.\n\nContinue working");
  });

  it("initial message: rendered when defined, null otherwise", () => {
    const reg = registryOf({ w: { name: "W", initialMessage: "Start {workflowName}: {taskDescription}", phases: [{ id: "a", name: "A" }] } });
    const r = initialMessage(reg, at("w", [["w", 0]], { taskDescription: "go {taskId}" }));
    expect(r.ok && r.text).toBe("Start W: go {taskId}");
    const none = initialMessage(release, at("release", [["release", 0]]));
    expect(none.ok && none.text).toBeNull();
  });

  it("prompt variables: the allowlist names every variable the seed documents", () => {
    expect([...PROMPT_VARS].sort()).toEqual(
      ["approval", "blockedToolsList", "breadcrumbPath", "description", "globalStepCount", "nextPhaseName", "phaseId", "phaseName", "previousPhaseName", "taskDescription", "taskId", "toolName", "workflowDescription", "workflowKey", "workflowName"],
    );
    expect(Object.keys(releaseDefinitions)).toEqual(["release", "review", "security"]);
  });
});
