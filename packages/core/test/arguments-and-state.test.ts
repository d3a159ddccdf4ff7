/**
 * Issue 18, the edges a JavaScript caller reaches: wrong-typed arguments, states whose fields contradict each
 * other, the size of a state, hints chosen by the run's status. Each `it` named "why:" failed before issue 18.
 */
import { describe, expect, it } from "vitest";
import * as core from "@phasekit/core";
import { advance } from "../src/transitions/advance.js";
import { cancel, cancelNow } from "../src/transitions/cancel.js";
import { fail, markCompletionNotified, pause, resume } from "../src/transitions/lifecycle.js";
import { loop } from "../src/transitions/loop.js";
import { reduce } from "../src/transitions/reduce.js";
import { start } from "../src/transitions/start.js";
import { resolveActive } from "../src/transitions/resolve-active.js";
import { checkTool } from "../src/policy/check-tool.js";
import { checkDefinitions } from "../src/policy/check-definitions.js";
import { cancelledMessage, completionMessage, endOfRunMessage, failedMessage, initialMessage } from "../src/present/messages.js";
import { migrateState } from "../src/state/migrate.js";
import { toPersisted, type WorkflowState } from "../src/state/schema.js";
import type { WorkflowEvent } from "../src/transitions/types.js";
import { at, deep, registryOf, started } from "./helpers/core-fixtures.js";

const ctx = { now: 2_000 };
type AnyOutcome = { ok: boolean; error?: { code: string; details: { field?: unknown; hint?: unknown } } };
const code = (r: AnyOutcome): string | undefined => (r.ok ? undefined : r.error?.code);

/** Every exported function that takes a state, called with `state` in its place. */
function everyStateTaker(state: unknown): Array<[string, () => AnyOutcome]> {
  const s = state as WorkflowState;
  const events: WorkflowEvent[] = [{ type: "advance" }, { type: "loop" }, { type: "cancel" }, { type: "cancel-now" }, { type: "pause" }, { type: "resume" }, { type: "fail", reason: "x" }, { type: "mark-notified" }];
  return [
    ["advance", () => advance(deep, s, ctx)],
    ["loop", () => loop(deep, s, ctx)],
    ["cancel", () => cancel(deep, s, ctx)],
    ["cancelNow", () => cancelNow(deep, s, ctx)],
    ["pause", () => pause(deep, s, ctx)],
    ["resume", () => resume(deep, s, ctx)],
    ["fail", () => fail(deep, s, "why", ctx)],
    ["markCompletionNotified", () => markCompletionNotified(deep, s, ctx)],
    ["resolveActive", () => resolveActive(deep, s)],
    ["checkTool", () => checkTool(deep, s, "read")],
    ["checkDefinitions", () => checkDefinitions(deep, s)],
    ["completionMessage", () => completionMessage(deep, s)],
    ["cancelledMessage", () => cancelledMessage(deep, s)],
    ["failedMessage", () => failedMessage(deep, s)],
    ["endOfRunMessage", () => endOfRunMessage(deep, s)],
    ["initialMessage", () => initialMessage(deep, s)],
    ...events.map((e): [string, () => AnyOutcome] => [`reduce ${e.type}`, () => reduce(deep, s, e, ctx)]),
  ];
}

describe("wrong-typed arguments are INVALID_OPTIONS, never a throw", () => {
  it("why: undefined, a number, a string or an empty object as the state", () => {
    for (const bad of [undefined, 42, "state", {}, []]) {
      for (const [name, call] of everyStateTaker(bad)) {
        let r: AnyOutcome | undefined;
        expect(() => (r = call()), `${name}(${JSON.stringify(bad)})`).not.toThrow();
        expect([name, code(r as AnyOutcome)]).toEqual([name, "INVALID_OPTIONS"]);
      }
    }
  });
  it("null is 'no run': checkTool allows, reduce refuses the event with its own status code, others are INVALID_OPTIONS", () => {
    for (const [name, call] of everyStateTaker(null)) {
      const r = call();
      if (name === "checkTool") expect(r).toEqual({ ok: true, allowed: true });
      else if (name.startsWith("reduce")) expect(["NOT_RUNNING", "NOT_PAUSED", "NOT_FINISHED"]).toContain(code(r));
      else expect([name, code(r)]).toEqual([name, "INVALID_OPTIONS"]);
    }
    expect(() => reduce(deep, undefined as unknown as null, { type: "start", workflowKey: "flat", taskId: "t", taskDescription: "" }, ctx)).not.toThrow();
  });
  it("why: a NaN loop count is refused instead of looping past maxLoops", () => {
    const s = at("outer", [["outer", 0], ["mid", 0], ["inner", 0, Number.NaN]]);
    const r = loop(deep, s, ctx);
    expect(code(r)).toBe("INVALID_OPTIONS");
    expect(!r.ok && r.error.details.field).toBe("state.currentPath[2].loops");
  });
  it("why: start without workflowKey names the missing field", () => {
    const r = start(deep, { taskId: "t", taskDescription: "d" } as unknown as core.StartInput, ctx);
    expect(!r.ok && [r.error.code, r.error.details.field]).toEqual(["INVALID_OPTIONS", "workflowKey"]);
    expect(!r.ok && r.error.message).not.toContain('"undefined"');
  });
  it("why: fail with an object reason is refused (it made the stored state unreadable)", () => {
    const s = started(deep, "flat");
    const r = fail(deep, s, { why: "x" } as unknown as string, ctx);
    expect(!r.ok && [r.error.code, r.error.details.field]).toEqual(["INVALID_OPTIONS", "reason"]);
    const viaReduce = reduce(deep, s, { type: "fail", reason: 7 } as unknown as WorkflowEvent, ctx);
    expect(code(viaReduce)).toBe("INVALID_OPTIONS");
    const ok = fail(deep, s, "text", ctx);
    expect(ok.ok && migrateState(JSON.parse(JSON.stringify(toPersisted(ok.state)))).ok).toBe(true);
  });
  it("why: compileDefinitions' options and the status predicates refuse or answer instead of throwing", () => {
    const r = core.compileDefinitions({}, null as unknown as core.CompileOptions);
    expect(!r.ok && [r.error.code, r.error.details.field]).toEqual(["INVALID_OPTIONS", "options.keepHealthy"]);
    expect(core.compileDefinitions({}, { keepHealthy: "yes" } as unknown as core.CompileOptions).ok).toBe(false);
    expect(core.isLive(null as unknown as WorkflowState)).toBe(false);
    expect(core.isFinished(undefined as unknown as WorkflowState)).toBe(false);
  });
  it("one summary for a problem list: the thrown error and the refusal say the same", () => {
    const r = core.compileDefinitions({ a: { name: "A", phases: [] }, b: { name: "B" } });
    if (r.ok) throw new Error("expected problems");
    const thrown = core.definitionProblemsError(r.problems);
    expect({ code: thrown.code, message: thrown.message, details: thrown.details }).toEqual({ code: r.error.code, message: r.error.message, details: r.error.details });
    expect(core.definitionProblemsError(r.problems, "x.yaml").message).toBe(r.error.message.replace("[definitions] ", "[definitions] x.yaml: "));
  });
  it("reduce never throws, even for an event whose getter throws (the package boundary catches the read)", () => {
    const hostile = new Proxy({}, { get: () => { throw new Error("boom"); } }) as WorkflowEvent;
    expect(code(core.reduce(deep, started(deep, "flat"), hostile, ctx))).toBe("INVALID_OPTIONS");
  });
});

describe("hints follow the run's actual status", () => {
  it("why: a paused run told to advance is told to resume, not that it is finished", () => {
    const paused = pause(deep, started(deep, "flat"), ctx);
    if (!paused.ok) throw new Error(paused.error.message);
    const r = advance(deep, paused.state, ctx);
    expect(code(r)).toBe("NOT_RUNNING");
    expect(!r.ok && r.error.details.hint).toMatch(/paused: resume it first/);
    expect(!r.ok && r.error.message).not.toContain("finished run");
    const running = resume(deep, started(deep, "flat"), ctx);
    expect(!running.ok && running.error.details.hint).toMatch(/already running/);
  });
});

describe("migrateState checks rules across fields", () => {
  const base = toPersisted(started(deep, "flat"));
  const refused = (patch: object): { code: string; field: unknown } => {
    const r = migrateState({ ...base, ...patch });
    if (r.ok) throw new Error(`accepted ${JSON.stringify(patch)}`);
    return { code: r.error.code, field: r.error.details.field };
  };
  it("why: finishedAt on a running run, failureReason on a completed one, updatedAt before startedAt", () => {
    expect(refused({ finishedAt: 1_500 })).toEqual({ code: "INVALID_STATE", field: "finishedAt" });
    expect(refused({ status: "completed", failureReason: "x" })).toEqual({ code: "INVALID_STATE", field: "failureReason" });
    expect(refused({ updatedAt: 999 })).toEqual({ code: "INVALID_STATE", field: "updatedAt" });
    expect(refused({ status: "failed", failureReason: "x", finishedAt: 5 })).toEqual({ code: "INVALID_STATE", field: "finishedAt" });
    expect(migrateState({ ...base, status: "failed", failureReason: "x", finishedAt: 1_000 }).ok).toBe(true);
  });
  it("why: a path longer than the nesting limit is refused at parse, before its segments are read", () => {
    const long = Array.from({ length: 1_000_000 }, () => ({ workflowKey: "flat", phaseIndex: 0, loops: 0 }));
    const r = migrateState({ ...base, currentPath: long });
    expect(!r.ok && [r.error.code, r.error.details.field]).toEqual(["INVALID_STATE", "currentPath"]);
    expect(!r.ok && r.error.message).toContain(`at most ${core.MAX_NESTING}`);
  });
});

describe("a persisted state does not grow with the definitions", () => {
  it("why: a 10,000-phase workflow's state stays under 2 KB", () => {
    const phases = Array.from({ length: 10_000 }, (_, i) => ({ id: `p${i}`, name: `Phase ${i}` }));
    const reg = registryOf({ big: { name: "Big", phases: [{ subworkflow: "huge" }, ...phases] }, huge: { name: "Huge", show: false, phases } });
    const s = started(reg, "big");
    const bytes = new TextEncoder().encode(JSON.stringify(toPersisted(s))).length;
    expect(bytes).toBeLessThan(2_048);
    expect(Object.values(s.definitions ?? {}).every((f) => /^[0-9a-f]{16}$/.test(f))).toBe(true);
  });
  it("why: migrations are exported as documented, and the newest one lifts v2 fingerprints to one hash", () => {
    expect(core.migrations.map((m) => m.from)).toEqual([0, 1, 2]);
    const v2 = { ...toPersisted(started(deep, "flat")), schemaVersion: 2, definitions: { flat: `${"a".repeat(16)}/12345678.9abcdef0` } };
    const r = migrateState(v2);
    expect(r.ok && r.state.definitions).toEqual({ flat: "a".repeat(16) });
    expect(r.ok && r.fromVersion).toBe(2);
  });
  it("a state recorded by v2 reads 'unchanged' against the same definitions after the migration", () => {
    const s = started(deep, "outer");
    const v2 = { ...toPersisted(s), schemaVersion: 2, definitions: Object.fromEntries(Object.entries(s.definitions ?? {}).map(([k, f]) => [k, `${f}/00000000.11111111`])) };
    const r = migrateState(v2);
    if (!r.ok) throw new Error(r.error.message);
    expect(checkDefinitions(deep, r.state)).toMatchObject({ ok: true, verdict: "unchanged" });
  });
});
