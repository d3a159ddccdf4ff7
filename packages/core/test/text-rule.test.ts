/**
 * Words the model reads are exact: over random nested definitions and random moves, every text core's presentation
 * produces for a run (status line, context prompt, not-done reminder, block reasons, initial message, the
 * workflow_step result line of every move, the end-of-run message) says done / complete / finished about the run
 * only when the run has completed. Before that, such words appear only bound to the current phase.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { WorkflowRegistry } from "../src/definitions/registry.js";
import { checkTool } from "../src/policy/check-tool.js";
import { contextPrompt } from "../src/present/context-prompt.js";
import { endOfRunMessage, initialMessage, notDoneReminder } from "../src/present/messages.js";
import { statusLine } from "../src/present/status-line.js";
import { LAST_PHASE_NOTE, stepResultLine } from "../src/present/step-result.js";
import type { WorkflowState } from "../src/state/schema.js";
import { reduce } from "../src/transitions/reduce.js";
import { resolveActive, type ActiveWorkflow } from "../src/transitions/resolve-active.js";
import type { WorkflowEvent } from "../src/transitions/types.js";
import { doneWord } from "./helpers/done-words.js";
import { registryOf } from "./helpers/core-fixtures.js";
import { buildDefinitions, workflowShape } from "./helpers/model-definitions.js";

const NUM_RUNS = process.env.CI === "true" ? 500 : 120;

const moveArb: fc.Arbitrary<WorkflowEvent> = fc.oneof(
  { weight: 8, arbitrary: fc.constant({ type: "advance" } as const) },
  { weight: 2, arbitrary: fc.constant({ type: "loop" } as const) },
  { weight: 1, arbitrary: fc.constant({ type: "restart-scope" } as const) },
  { weight: 1, arbitrary: fc.constant({ type: "pause" } as const) },
  { weight: 1, arbitrary: fc.constant({ type: "resume" } as const) },
  { weight: 1, arbitrary: fc.constant({ type: "cancel" } as const) },
  { weight: 1, arbitrary: fc.constant({ type: "fail", reason: "disk full" } as const) },
);

/** The model's definitions, with tool rules on some phases and an initial message on the root. */
function registryFor(shapes: Parameters<typeof buildDefinitions>[0]): WorkflowRegistry {
  const defs = buildDefinitions(shapes) as Record<string, { phases: Array<Record<string, unknown>>; initialMessage?: string }>;
  for (const def of Object.values(defs)) {
    def.phases.forEach((p, k) => {
      if ("id" in p) p["tools"] = k % 2 === 0 ? { blacklist: ["bash"] } : { whitelist: ["read"] };
    });
  }
  (defs["w0"] as { initialMessage?: string }).initialMessage = "Starting {workflowName} on {description}: {firstPhaseEmoji} {firstPhaseName}";
  return registryOf(defs);
}

function activeOf(registry: WorkflowRegistry, state: WorkflowState): ActiveWorkflow | null {
  const r = resolveActive(registry, state);
  return r.ok ? r.active : null;
}

/** Every text core can produce for `state` as it stands. */
function textsOf(registry: WorkflowRegistry, state: WorkflowState): string[] {
  const out: string[] = [];
  const a = activeOf(registry, state);
  if (a !== null) {
    out.push(statusLine(a), contextPrompt(a), notDoneReminder(a));
    for (const tool of ["bash", "read", "edit"]) {
      const d = checkTool(registry, state, tool);
      if (d.ok && !d.allowed) out.push(d.reason);
    }
  }
  const init = initialMessage(registry, state);
  if (init.ok && init.text !== null) out.push(init.text);
  const end = endOfRunMessage(registry, state);
  if (end.ok) out.push(end.text);
  return out;
}

function assertRule(texts: readonly string[], state: WorkflowState): void {
  if (state.status === "completed") return;
  for (const text of texts) expect({ status: state.status, word: doneWord(text), text }).toMatchObject({ word: undefined });
}

describe("the text rule: done / complete / finished only when the run has completed", () => {
  it(`holds for every text of every state and move (${NUM_RUNS} random runs)`, () => {
    let lastPhases = 0;
    fc.assert(
      fc.property(fc.array(workflowShape, { minLength: 3, maxLength: 5 }), fc.array(moveArb, { maxLength: 25 }), (shapes, moves) => {
        const registry = registryFor(shapes);
        const started = reduce(registry, null, { type: "start", workflowKey: "w0", taskId: "t-1", taskDescription: "the task" }, { now: 1 });
        if (!started.ok) throw new Error(started.error.message);
        let s = started.state;
        assertRule(textsOf(registry, s), s);
        let now = 2;
        for (const event of moves) {
          const before = activeOf(registry, s);
          const r = reduce(registry, s, event, { now: now++ });
          if (!r.ok) continue;
          s = r.state;
          const after = activeOf(registry, s);
          if (after !== null && after.nextPhase === null) lastPhases += 1;
          const line = stepResultLine(r.happened, before?.phase.name ?? "?", after === null ? null : { workflowKey: after.scopeKey, phaseId: after.phase.id, phaseName: after.phase.name, emoji: after.phase.emoji, depth: 1 }, after?.nextPhase ?? null, after?.definition.name ?? "W");
          assertRule([line, ...textsOf(registry, s)], s);
          if (s.status === "completed") expect(line).toMatch(/→ DONE\. All phases of .* are complete; stop here\.$/);
        }
      }),
      { numRuns: NUM_RUNS },
    );
    expect(lastPhases).toBeGreaterThan(0); // the last phase, where "(then DONE)" was said, was reached
  });

  it("entering the last phase says what to do next, never (then DONE)", () => {
    const registry = registryOf({ w: { name: "W", phases: [{ id: "b", name: "Build", emoji: "📦" }, { id: "r", name: "Review", emoji: "🔍" }] } });
    const s0 = reduce(registry, null, { type: "start", workflowKey: "w", taskId: "t", taskDescription: "x" }, { now: 1 });
    if (!s0.ok) throw new Error("start");
    const r = reduce(registry, s0.state, { type: "advance" }, { now: 2 });
    if (!r.ok) throw new Error("advance");
    const a = activeOf(registry, r.state) as ActiveWorkflow;
    const to = { workflowKey: "w", phaseId: "r", phaseName: "Review", emoji: "🔍", depth: 1 };
    expect(stepResultLine(r.happened, "Build", to, a.nextPhase, "W")).toBe(`✓ Advanced: Build → 🔍 Review (${LAST_PHASE_NOTE})`);
    expect(LAST_PHASE_NOTE).toBe("last phase: when this phase is finished, call workflow_step next");
    expect(contextPrompt(a)).toContain(`Next phase: none (${LAST_PHASE_NOTE})`);
    expect(contextPrompt(a)).toContain("This is the last phase: when this phase is finished, call the workflow_step tool with action='next'");
    expect(doneWord("✓ Advanced: Build → 🔍 Review (then DONE)")).toBe("done");
    expect(doneWord("Next phase: none (advancing completes the workflow)")).toBe("completes");
  });
});
