/**
 * Words the model reads are exact, at the extension: every `workflow_step` result (next, loop, status, cancel,
 * refusals) and every message the extension sends for random action sequences on the example workflows says
 * done / complete / finished about the run only once the run has completed (the rule of core's text-rule test).
 */
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
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

  it("holds for every text the extension gives the model: results, context, reminders, notices, user messages (30 runs)", async () => {
    const eventArb = fc.oneof(
      { weight: 4, arbitrary: actionArb },
      { weight: 2, arbitrary: fc.constant("idle") },
      { weight: 1, arbitrary: fc.constant("prompt") },
      { weight: 1, arbitrary: fc.constant("turn") },
    );
    const seen = { reminders: 0, contexts: 0, notices: 0 };
    vi.useFakeTimers();
    try {
      await fc.assert(
        fc.asyncProperty(fc.boolean(), fc.array(eventArb, { minLength: 1, maxLength: 16 }), async (settledHost, events) => {
          const p = tempProject();
          try {
            const { pi } = loadExtension(p, { settledHost, options: { maxReminders: 1 } }); // the cap notice within reach
            await pi.emit("session_start", {});
            await pi.command("workflow", "ship Add a flag");
            let completed = false;
            let seenSent = 0;
            let seenUser = 0;
            const check = (what: string, text: string): void => {
              if (!completed) expect(doneWord(text), `${what}: ${text}`).toBeUndefined();
            };
            for (const event of events) {
              if (event === "idle") {
                await pi.emit("agent_end", { messages: [{ role: "assistant", stopReason: "stop" }] });
                if (settledHost) await pi.emit("agent_settled", { aborted: false });
                await vi.advanceTimersByTimeAsync(3_100); // the countdown, then its reminder
              } else if (event === "prompt") {
                for (const r of await pi.emit("before_agent_start", { prompt: "go" })) {
                  const content = (r as { message?: { content: string } } | undefined)?.message?.content;
                  if (content !== undefined) seen.contexts += 1;
                  check("context", content ?? "");
                }
              } else if (event === "turn") {
                for (const r of await pi.emit("turn_end", { entries: [] })) for (const e of (r as { entries?: Array<{ content: string }> } | undefined)?.entries ?? []) check("turn context", e.content);
              } else {
                const r = await pi.step({ action: event });
                if (!("error" in r) && (r.details as { status?: string }).status === "completed") completed = true;
                check(event, "error" in r ? r.error : resultText(r));
              }
              // What went out meanwhile: custom messages (end of run, notices, countdown) and user messages (reminders).
              for (const m of pi.sent.slice(seenSent)) {
                if (m.customType === "workflow:notice") seen.notices += 1;
                if (!(m.customType === "workflow:complete" && completed)) check(m.customType, m.content);
              }
              for (const u of pi.userMessages.slice(Math.max(seenUser, 1))) {
                seen.reminders += 1;
                check("user message", u);
              }
              if (seenUser === 0) check("initial message", pi.userMessages[0] ?? "");
              seenSent = pi.sent.length;
              seenUser = pi.userMessages.length;
            }
          } finally {
            p.cleanup();
          }
        }),
        { numRuns: 30 },
      );
    } finally {
      vi.useRealTimers();
    }
    expect(seen.reminders).toBeGreaterThan(0);
    expect(seen.contexts).toBeGreaterThan(0);
    expect(seen.notices).toBeGreaterThan(0);
  });
});
