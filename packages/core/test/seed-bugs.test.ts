/** One test per bug of @harms-haus/pi-workflows 1.0.0 (seeds 000 and 002) that this reducer fixes. */
import { describe, expect, it } from "vitest";
import { advance } from "../src/transitions/advance.js";
import { cancel } from "../src/transitions/cancel.js";
import { progressLine } from "../src/present/context-prompt.js";
import { cancelledMessage, completionMessage } from "../src/present/messages.js";
import { migrateState } from "../src/state/migrate.js";
import { resolveActive, type ActiveWorkflow } from "../src/transitions/resolve-active.js";
import { toPersisted, type WorkflowState } from "../src/state/schema.js";
import { statusLine } from "../src/present/status-line.js";
import { contextPrompt } from "../src/present/context-prompt.js";
import { releaseRegistry } from "../../../examples/release-workflow.js";
import { activeOf, at, deep, registryOf, started, without } from "./helpers/core-fixtures.js";

const release = releaseRegistry();

function active(state: WorkflowState): ActiveWorkflow {
  return activeOf(release, state);
}

describe("seed bugs", () => {
  it("seed bug: next/previous names in sub-workflows came from the top-level phase list", () => {
    const inStatic = active(at("release", [["release", 1], ["review", 0]]));
    expect([inStatic.previousPhase?.phaseName, inStatic.nextPhase?.phaseName]).toEqual(["Build", "Threat Model"]);
    const inAudit = active(at("release", [["release", 1], ["review", 1], ["security", 1]]));
    expect([inAudit.previousPhase?.phaseName, inAudit.nextPhase?.phaseName]).toEqual(["Threat Model", "Publish"]);
    const inPublish = active(at("release", [["release", 2]]));
    expect([inPublish.previousPhase?.phaseName, inPublish.nextPhase]).toEqual(["Dependency Audit", null]);
  });

  it("seed bug: the cancelled message reused completionMessage", () => {
    const reg = registryOf({ w: { name: "W", completionMessage: "DONE {workflowName}", phases: [{ id: "a", name: "A" }] } });
    const cancelledRun = at("w", [["w", 0]], { status: "cancelled" });
    const c = cancelledMessage(reg, cancelledRun);
    expect(c.ok && c.text).toBe("❌ **W Cancelled**\n\n**Task:** Do the thing\n**Task ID:** task-1");
    const own = registryOf({ w: { name: "W", completionMessage: "DONE", cancelledMessage: "STOPPED {workflowName} at {phaseName}", phases: [{ id: "a", name: "A" }] } });
    const o = cancelledMessage(own, cancelledRun);
    expect(o.ok && o.text).toBe("STOPPED W at A");
  });

  it("seed bug: a missing definition mid-run was treated as all phases complete", () => {
    const s = at("release", [["release", 1], ["review", 0]]);
    const r = advance(without(release, "security"), s, { now: 5 });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe("MISSING_DEFINITION");
    expect(r.error.details).toMatchObject({ field: "currentPath[2].workflowKey", value: "security" });
    const gone = resolveActive(without(release, "review"), s);
    expect(gone.ok || gone.error.code).toBe("MISSING_DEFINITION");
  });

  it("seed bug: status and progress counts at depth used the wrong level's counts", () => {
    const deepest = active(at("release", [["release", 1], ["review", 1], ["security", 0]], { globalStepCount: 4 }));
    expect(statusLine(deepest)).toBe("Release Pipeline > Code Review [2/3] > Security Audit [2/2] > 🛡️ Threat Model [1/2]");
    expect(progressLine(deepest)).toBe("Progress: phase 1/2 of Security Audit (in Release Pipeline 2/3 > Code Review 2/2) · 4 step(s) so far");
  });

  it("seed bug: substituted template values were expanded again", () => {
    const done = at("release", [["release", 2]], { status: "completed", taskDescription: "fix {taskId} and {workflowName}", taskId: "t-7" });
    const c = completionMessage(release, done);
    expect(c.ok && c.text).toContain("**Task:** fix {taskId} and {workflowName}\n**Task ID:** t-7");
    const reg = registryOf({ w: { name: "Named {phaseName}", phases: [{ id: "a", name: "A {taskId}", instructions: "Do {phaseName} for {workflowName}" }] } });
    expect(contextPrompt(activeOf(reg, at("w", [["w", 0]], { taskId: "T" })))).toContain("Instructions:\nDo A {taskId} for Named {phaseName}");
  });

  it("seed bug: an armed cancel persisted and survived other actions", () => {
    const armed = cancel(deep, started(deep, "flat"), { now: 2 });
    if (!armed.ok) throw new Error(armed.error.message);
    expect(armed.state.cancelPending).toBe(true);
    expect(toPersisted(armed.state).cancelPending).toBe(false);
    const reread = migrateState(JSON.parse(JSON.stringify(toPersisted(armed.state))));
    expect(reread.ok && reread.state.cancelPending).toBe(false);
    const moved = advance(deep, armed.state, { now: 3 });
    if (!moved.ok) throw new Error(moved.error.message);
    expect(moved.state.cancelPending).toBe(false);
    const second = cancel(deep, moved.state, { now: 4 });
    expect(second.ok && second.happened.type).toBe("cancel-armed");
  });
});
