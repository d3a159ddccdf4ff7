/**
 * Words the model reads are exact, at the extension: every `workflow_step` result (next, loop, status, cancel,
 * refusals) and every message the extension sends for random action sequences on the example workflows says
 * done / complete / finished about the run only once the run has completed (the rule of core's text-rule test).
 */
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { doneWord as anyDoneWord } from "../../../core/test/helpers/done-words.js";
import { loadDefinitionFolders } from "../../src/definitions/folders.js";
import { resultText } from "./helpers/fake-pi.js";
import { loadExtension, tempProject } from "./helpers/setup.js";

let project: ReturnType<typeof tempProject>;
beforeEach(() => {
  project = tempProject();
});
afterEach(() => project.cleanup());

/** The rule holds for phasekit's words: the workflow author's own phase instructions are theirs, so they are left out. */
function doneWord(text: string): string | undefined {
  let rest = text;
  for (const def of loadDefinitionFolders([project.workflows]).registry.workflows.values()) {
    for (const p of def.phases) if ("instructions" in p && p.instructions !== "") rest = rest.split(p.instructions).join(" ");
  }
  return anyDoneWord(rest);
}

const actionArb = fc.oneof(
  { weight: 5, arbitrary: fc.constant("next") },
  { weight: 1, arbitrary: fc.constant("loop") },
  { weight: 1, arbitrary: fc.constant("status") },
  { weight: 1, arbitrary: fc.constant("cancel") },
);

describe("workflow_step's words", () => {
  it("the last phase is announced with what to do, and only the completing step says DONE", async () => {
    const { pi } = loadExtension(project);
    await pi.emit("session_start", {});
    await pi.command("workflow", "ship Add a flag");
    const lines: string[] = [];
    for (let i = 0; i < 4; i++) lines.push(resultText(await pi.step({ action: "next" })).split("\n")[0] as string);
    expect(lines[2]).toBe("✓ Left sub-workflow: Review → 📝 Report (last phase: when this phase is finished, call workflow_step next)");
    expect(lines.slice(0, 3).map(doneWord)).toEqual([undefined, undefined, undefined]);
    expect(lines[3]).toMatch(/^✓ Report → DONE/);
  });

  it("holds for every result and message of random action sequences (30 runs)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(actionArb, { minLength: 1, maxLength: 12 }), async (actions) => {
        const p = tempProject();
        try {
          const { pi } = loadExtension(p);
          await pi.emit("session_start", {});
          await pi.command("workflow", "ship Add a flag");
          let completed = false;
          for (const action of actions) {
            const r = await pi.step({ action });
            const text = "error" in r ? r.error : resultText(r);
            const details = "error" in r ? {} : (r.details as { status?: string });
            if (details.status === "completed") completed = true;
            if (!completed) expect(doneWord(text), `${action}: ${text}`).toBeUndefined();
          }
          for (const m of pi.sent) if (!completed) expect(doneWord(m.content), m.content).toBeUndefined();
        } finally {
          p.cleanup();
        }
      }),
      { numRuns: 30 },
    );
  });
});
