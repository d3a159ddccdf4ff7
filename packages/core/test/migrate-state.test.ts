import { createHash } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { isWorkflowError } from "@phasekit/core";
import { detectStateVersion, migrateState, parseState } from "../src/state/migrate.js";
import { migrations } from "../src/state/migrations.js";
import { STATE_SCHEMA_VERSION, WorkflowStateSchema } from "../src/state/schema.js";

const fixtures = fileURLToPath(new URL("./fixtures/", import.meta.url));
const read = (name: string): unknown => JSON.parse(readFileSync(`${fixtures}${name}`, "utf8"));
const inputs = readdirSync(fixtures).filter((f) => f.startsWith("state-") && f.endsWith(".json") && !f.endsWith(".expected.json"));

const v1 = {
  active: true,
  workflowKey: "rpir",
  currentPath: [{ workflowKey: "rpir", phaseIndex: 1 }, { workflowKey: "review", phaseIndex: 0 }],
  globalStepCount: 3,
  taskId: "wf-1-abc",
  taskDescription: "task",
  startedAt: 1000,
  completionNotified: false,
  cancelled: false,
};

function refusal(raw: unknown): { code: string; message: string; field: unknown } {
  const r = migrateState(raw);
  if (r.ok) throw new Error("expected a refusal");
  return { code: r.error.code, message: r.error.message, field: r.error.details.field };
}

describe("migration list", () => {
  it("has one step per version, in order, ending at the current version", () => {
    expect(migrations).toHaveLength(STATE_SCHEMA_VERSION);
    migrations.forEach((m, i) => expect(m.from).toBe(i));
  });
});

/**
 * Content hashes (sha256 of the parsed JSON, so line endings do not matter) of every fixture as first written.
 * A failure here means a frozen fixture was edited: restore it and add a new one instead (see fixtures/README.md).
 */
const FROZEN: Readonly<Record<string, string>> = {
  "state-v0-no-step-count.expected.json": "ab69f2f11cd9a31f",
  "state-v0-no-step-count.json": "f18f6b68dcdd6beb",
  "state-v0-with-step-count.expected.json": "55c51dcb94b4f531",
  "state-v0-with-step-count.json": "ed97427b96a5d8a8",
  "state-v1-armed-cancel.expected.json": "caf853aff908d4d6",
  "state-v1-armed-cancel.json": "5d5c0aff6701df93",
  "state-v1-cancelled.expected.json": "816e603e01e10225",
  "state-v1-cancelled.json": "e20ac77bc4ae3564",
  "state-v1-completed.expected.json": "f33f7d28d15d67c1",
  "state-v1-completed.json": "8e812678798b7187",
  "state-v1-nested.expected.json": "ca4c667ed3b36415",
  "state-v1-nested.json": "88167d87fabb97fa",
  "state-v1-running.expected.json": "5db095a51abf7ca8",
  "state-v1-running.json": "4757631112bb5268",
  "state-v2-current.expected.json": "d42707581ddc2a15",
  "state-v2-current.json": "0e181f9cbe8385cc",
  "state-v2-failed.expected.json": "6d42b9182c1fc6a9",
  "state-v2-failed.json": "ddea8102db72bddf",
  "state-v2-with-definitions.expected.json": "2fe96b44872dce40",
  "state-v2-with-definitions.json": "ef762fd81ace6905",
  "state-v3-current.expected.json": "3ae58cfe3981d978",
  "state-v3-current.json": "607ff8e3bd62ffe3",
};

describe("frozen fixtures", () => {
  it("are unchanged since they were written, and none is missing", () => {
    const files = readdirSync(fixtures).filter((f) => f.startsWith("state-")).sort();
    for (const name of Object.keys(FROZEN)) expect(files).toContain(name);
    for (const file of files.filter((f) => Object.hasOwn(FROZEN, f))) {
      const hash = createHash("sha256").update(JSON.stringify(read(file))).digest("hex").slice(0, 16);
      expect({ file, hash }).toEqual({ file, hash: FROZEN[file] });
    }
  });
  it("covers every old shape", () => {
    expect(inputs.length).toBeGreaterThanOrEqual(9);
    for (const v of ["state-v0-", "state-v1-", "state-v2-", "state-v3-"]) expect(inputs.some((f) => f.startsWith(v))).toBe(true);
  });
  for (const file of inputs) {
    it(`${file} migrates to its expected file`, () => {
      const raw = read(file);
      const before = JSON.stringify(raw);
      const result = migrateState(raw);
      const expected = read(file.replace(/\.json$/, ".expected.json")) as { fromVersion: number; state: { schemaVersion: number } };
      if (expected.state.schemaVersion === STATE_SCHEMA_VERSION) expect(result).toEqual({ ok: true, notes: [], ...expected });
      // Once a newer version exists, the frozen expectation is lifted by the same migrations, never rewritten.
      const lifted = migrateState(expected.state);
      expect(lifted.ok).toBe(true);
      if (lifted.ok) expect(result).toEqual({ ok: true, state: lifted.state, fromVersion: expected.fromVersion, notes: [] });
      expect(JSON.stringify(raw)).toBe(before); // the input is never written to
      if (result.ok) expect(WorkflowStateSchema.parse(result.state)).toEqual(result.state);
    });
  }
  it("a migrated state migrates to itself (current version is a fixed point)", () => {
    for (const file of inputs) {
      const first = migrateState(read(file));
      if (!first.ok) throw first.error;
      expect(parseState(JSON.stringify(first.state))).toEqual({ ok: true, state: first.state, fromVersion: STATE_SCHEMA_VERSION, notes: [] });
    }
  });
});

describe("version detection", () => {
  it("reads schemaVersion, else currentPath (v1), else currentPhaseIndex (v0)", () => {
    expect(detectStateVersion({ schemaVersion: 2, currentPath: [] })).toEqual({ ok: true, version: 2 });
    expect(detectStateVersion({ currentPath: [], currentPhaseIndex: 1 })).toEqual({ ok: true, version: 1 });
    expect(detectStateVersion({ currentPhaseIndex: 1 })).toEqual({ ok: true, version: 0 });
  });
  it("accepts an explicit old schemaVersion and migrates from there", () => {
    const r = migrateState({ ...v1, schemaVersion: 1 });
    expect(r.ok && r.fromVersion).toBe(1);
  });
  it("refuses a document that is no state at all", () => {
    expect(refusal({ hello: "world" })).toMatchObject({ code: "INVALID_STATE", field: "schemaVersion" });
    expect(refusal(null).message).toContain("expected an object, got null");
    expect(refusal([1]).message).toContain("expected an object, got an array");
  });
});

describe("v1 → v2 mapping", () => {
  it("maps active/cancelled to a status", () => {
    const status = (over: object): unknown => {
      const r = migrateState({ ...v1, ...over });
      return r.ok ? r.state.status : r.error.message;
    };
    expect(status({ active: true })).toBe("running");
    expect(status({ active: true, cancelled: true })).toBe("running");
    expect(status({ active: false, cancelled: true })).toBe("cancelled");
    expect(status({ active: false, cancelled: false })).toBe("completed");
  });
  it("drops _cancelPending, starts generation and loops at zero, keeps completionNotified", () => {
    const r = migrateState({ ...v1, _cancelPending: true, completionNotified: true, active: false });
    if (!r.ok) throw r.error;
    expect(r.state).toMatchObject({ cancelPending: false, generation: 0, loopCount: 0, completionNotified: true, updatedAt: 1000 });
    expect(r.state.currentPath.map((s) => s.loops)).toEqual([0, 0]);
    expect(r.state).not.toHaveProperty("_cancelPending");
  });
  it("approximates a missing globalStepCount by the root phase index", () => {
    const { globalStepCount: _, ...rest } = v1;
    const r = migrateState(rest);
    expect(r.ok && r.state.globalStepCount).toBe(1);
  });
  it("drops fields it does not know from old shapes", () => {
    const r = migrateState({ ...v1, someFork: { x: 1 } });
    expect(r.ok && Object.keys(r.state)).not.toContain("someFork");
  });
});

describe("refusals name the field and why", () => {
  it("refuses a newer version, naming it and the newest known", () => {
    const r = migrateState({ ...v1, schemaVersion: STATE_SCHEMA_VERSION + 1 });
    expect(!r.ok && isWorkflowError(r.error, "UNSUPPORTED_VERSION")).toBe(true);
    expect(!r.ok && r.error.message).toMatch(new RegExp(`schemaVersion ${STATE_SCHEMA_VERSION + 1} .*newest.*\\(${STATE_SCHEMA_VERSION}\\)`));
  });
  it("refuses a malformed schemaVersion", () => {
    expect(refusal({ ...v1, schemaVersion: "2" })).toMatchObject({ code: "INVALID_STATE", field: "schemaVersion" });
    expect(refusal({ ...v1, schemaVersion: -1 }).message).toContain("expected a non-negative integer, got -1");
  });
  it("names a bad phase index inside the path", () => {
    const raw = { ...v1, currentPath: [{ workflowKey: "rpir", phaseIndex: 1 }, { workflowKey: "review", phaseIndex: "x" }] };
    const e = refusal(raw);
    expect(e).toMatchObject({ code: "INVALID_STATE", field: "currentPath[1].phaseIndex" });
    expect(e.message).toContain('currentPath[1].phaseIndex: expected a non-negative integer, got "x"');
  });
  it.each([
    [{ ...v1, currentPath: [] }, "currentPath", "at least 1 item"],
    [{ ...v1, startedAt: 1.5 }, "startedAt", "non-negative integer, got 1.5"],
    [{ ...v1, active: "yes" }, "active", 'expected a boolean, got "yes"'],
    [{ ...v1, currentPath: [null] }, "currentPath[0]", "got null"],
    [{ active: true, workflowKey: "a", currentPhaseIndex: -2, taskId: "t", taskDescription: "", startedAt: 1 }, "currentPhaseIndex", "got -2"],
  ])("refuses %j at %s", (raw, field, why) => {
    const e = refusal(raw);
    expect(e.field).toBe(field);
    expect(e.message).toContain(`${field}: `);
    expect(e.message).toContain(why);
  });
  it("refuses a current-version state with a bad status or an unknown field", () => {
    const good = read("state-v2-current.json") as Record<string, unknown>;
    expect(refusal({ ...good, status: "done" })).toMatchObject({ field: "status" });
    expect(refusal({ ...good, status: "done" }).message).toContain('got "done"');
    expect(refusal({ ...good, extra: 1 }).message).toContain('extra: unknown field "extra"');
  });
  it("refuses a path whose root is not the workflowKey", () => {
    expect(refusal({ ...v1, workflowKey: "other" })).toMatchObject({ code: "INVALID_STATE", field: "currentPath[0].workflowKey" });
  });
  it("parseState refuses bad JSON with a typed error", () => {
    const r = parseState("{not json");
    expect(!r.ok && r.error.code).toBe("INVALID_STATE");
    expect(!r.ok && r.error.message).toContain("not valid JSON");
  });
});
