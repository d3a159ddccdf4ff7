import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { isWorkflowError } from "@phasekit/core";
import { compileDefinitions } from "../src/definitions/compile.js";
import type { CompileResult } from "../src/definitions/compile.js";
import { migrateState, parseState } from "../src/state/migrate.js";
import type { ParseResult } from "../src/state/migrate.js";
import { WorkflowStateSchema } from "../src/state/schema.js";
import { FrozenMap } from "../src/definitions/frozen.js";

const runs = process.env.CI === "true" ? 1_000 : 100;

// Everything a pollution could touch, captured before and compared after the whole file.
const protoNames = (): string[] => [Object.prototype, Array.prototype, Function.prototype].flatMap((p) => Object.getOwnPropertyNames(p));
let before: string[] = [];
beforeAll(() => {
  before = protoNames();
});
afterAll(() => {
  expect(protoNames()).toEqual(before);
});

function assertClean(): void {
  expect((({}) as Record<string, unknown>)["polluted"]).toBeUndefined();
  expect(Object.getPrototypeOf({})).toBe(Object.prototype);
  expect(Object.keys(Object.prototype)).toEqual([]);
}

function assertTypedState(r: ParseResult): void {
  if (r.ok) {
    expect(WorkflowStateSchema.safeParse(r.state).success).toBe(true);
    expect(Number.isInteger(r.fromVersion)).toBe(true);
  } else {
    expect(isWorkflowError(r.error)).toBe(true);
    expect(["INVALID_STATE", "UNSUPPORTED_VERSION"]).toContain(r.error.code);
    expect(r.error.message.startsWith("[phasekit] [state] ")).toBe(true);
  }
}

function assertTypedCompile(r: CompileResult): void {
  expect(r.ok).toBe(r.problems.length === 0);
  for (const p of r.problems) {
    for (const field of [p.code, p.path, p.message, p.hint]) expect(typeof field).toBe("string");
  }
  if (!r.ok) {
    expect(structuredClone(r.error)).toEqual(r.error);
    return;
  }
  // Read-only maps whose entries are private (issue 18): not Map instances, so Map.prototype.set cannot reach them.
  expect(r.registry.workflows).toBeInstanceOf(FrozenMap);
  expect(r.registry.commands).toBeInstanceOf(FrozenMap);
  for (const [name, key] of r.registry.commands) expect(r.registry.workflows.has(key) && typeof name === "string").toBe(true);
}

const anything = fc.anything({
  withNullPrototype: true,
  withMap: true,
  withSet: true,
  withBoxedValues: true,
  withSparseArray: true,
  withDate: true,
  withBigInt: true,
  withTypedArray: true,
  withObjectString: true,
  key: fc.oneof(fc.string(), fc.constantFrom("__proto__", "constructor", "prototype", "schemaVersion", "currentPath", "currentPhaseIndex", "workflows", "phases", "subworkflow")),
});

const v1 = {
  active: true,
  workflowKey: "rpir",
  currentPath: [{ workflowKey: "rpir", phaseIndex: 1 }],
  globalStepCount: 1,
  taskId: "t",
  taskDescription: "d",
  startedAt: 1,
};
const v2 = { ...v1, schemaVersion: 2, status: "running", updatedAt: 1, generation: 0, completionNotified: false, loopCount: 0 };
const defs = { workflows: { release: { name: "R", phases: [{ id: "a", name: "A" }, { subworkflow: "review" }] }, review: { name: "V", phases: [{ id: "b", name: "B" }], show: false } } };

const HOSTILE_JSON = [
  '{"__proto__":{"polluted":1}}',
  '{"constructor":{"prototype":{"polluted":1}}}',
  '{"prototype":{"polluted":1}}',
  '{"__proto__":[]}',
  '{"__proto__":null,"constructor":null}',
];

/** Puts `value` at a random place of a valid document: deep enough to reach every parser branch. */
function implant(doc: unknown, value: unknown, pick: number): unknown {
  const copy = JSON.parse(JSON.stringify(doc)) as Record<string, unknown>;
  const slots: Array<[Record<string, unknown> | unknown[], string | number]> = [];
  const walk = (node: unknown): void => {
    if (typeof node !== "object" || node === null) return;
    for (const k of Object.keys(node)) {
      slots.push([node as Record<string, unknown>, Array.isArray(node) ? Number(k) : k]);
      walk((node as Record<string, unknown>)[k]);
    }
  };
  walk(copy);
  const slot = slots[pick % slots.length];
  if (slot) (slot[0] as Record<string | number, unknown>)[slot[1]] = value;
  return copy;
}

describe("migrateState on hostile input", () => {
  it("arbitrary JSON values: typed result, never a throw", () => {
    fc.assert(fc.property(fc.jsonValue(), (raw) => assertTypedState(migrateState(raw))), { numRuns: runs });
    assertClean();
  });
  it("arbitrary JS values (null prototypes, Maps, sparse arrays, odd keys)", () => {
    fc.assert(fc.property(anything, (raw) => assertTypedState(migrateState(raw))), { numRuns: runs });
    assertClean();
  });
  it("valid v1/v2 states with garbage implanted anywhere", () => {
    const garbage = fc.oneof(fc.jsonValue(), fc.constantFrom(...HOSTILE_JSON).map((t) => JSON.parse(t) as unknown));
    fc.assert(
      fc.property(fc.constantFrom<unknown>(v1, v2), garbage, fc.nat(), (doc, g, pick) => assertTypedState(migrateState(implant(doc, g, pick)))),
      { numRuns: runs },
    );
    assertClean();
  });
  it("parseState on arbitrary text", () => {
    fc.assert(fc.property(fc.oneof(fc.string(), fc.json()), (text) => assertTypedState(parseState(text))), { numRuns: runs });
  });
  it.each(HOSTILE_JSON)("refuses %s without touching a prototype", (text) => {
    const r = parseState(text);
    expect(r.ok).toBe(false);
    assertClean();
  });
  it("refuses a state carrying an own __proto__ key instead of silently dropping it", () => {
    const r = parseState(JSON.stringify(v2).replace('"taskId"', '"__proto__":{"polluted":1},"taskId"'));
    expect(!r.ok && r.error.message).toContain('__proto__: the key "__proto__" is not allowed');
    const nested = parseState(JSON.stringify(v1).replace('"phaseIndex":1', '"phaseIndex":1,"__proto__":{"polluted":1}'));
    expect(!nested.ok && nested.error.details.field).toBe("currentPath[0].__proto__");
    assertClean();
  });
  it("deeply nested garbage is refused, not a stack overflow", () => {
    const depth = 20_000;
    const deep = JSON.parse(`${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`) as unknown;
    assertTypedState(migrateState({ ...v1, currentPath: [deep] }));
    assertTypedState(migrateState({ ...v1, extra: deep }));
    assertTypedState(migrateState(deep));
  });
});

describe("compileDefinitions on hostile input", () => {
  it("arbitrary JSON values: typed result, never a throw", () => {
    fc.assert(fc.property(fc.jsonValue(), (raw) => assertTypedCompile(compileDefinitions(raw))), { numRuns: runs });
    assertClean();
  });
  it("arbitrary JS values, also under a workflows wrapper", () => {
    fc.assert(
      fc.property(anything, fc.boolean(), (raw, wrap) => assertTypedCompile(compileDefinitions(wrap ? { workflows: raw } : raw))),
      { numRuns: runs },
    );
    assertClean();
  });
  it("valid definitions with garbage implanted anywhere", () => {
    const garbage = fc.oneof(fc.jsonValue(), fc.constantFrom(...HOSTILE_JSON).map((t) => JSON.parse(t) as unknown));
    fc.assert(fc.property(garbage, fc.nat(), (g, pick) => assertTypedCompile(compileDefinitions(implant(defs, g, pick)))), { numRuns: runs });
    assertClean();
  });
  it("reports own __proto__ keys that zod would drop, at every level", () => {
    const raw = JSON.parse(
      '{"__proto__":{"name":"P","phases":[]},"ok":{"name":"O","__proto__":{"polluted":1},"phases":[{"id":"a","name":"A","__proto__":{"polluted":1},"tools":{"__proto__":{"whitelist":[]}}}]}}',
    ) as unknown;
    const r = compileDefinitions(raw);
    expect(r.ok).toBe(false);
    const paths = r.problems.map((p) => p.path);
    expect(paths).toEqual(expect.arrayContaining(["__proto__", "ok.__proto__", "ok.phases[0].__proto__", "ok.phases[0].tools.__proto__"]));
    expect(r.ok ? r.registry.workflows.size : 0).toBe(0);
    assertClean();
  });
  it("constructor and prototype keys are plain keys (pi-workflows loads such folders) and stay out of every prototype", () => {
    const raw = JSON.parse(
      '{"constructor":{"name":"C","phases":[{"id":"a","name":"A"}],"prototype":{"polluted":1}},"prototype":{"name":"P","phases":[{"subworkflow":"constructor"}]},"x":{"name":"X","phases":[{"id":"a","name":"A","constructor":{"prototype":{"polluted":1}}}]}}',
    ) as unknown;
    const r = compileDefinitions(raw);
    expect(r.ok ? r.registry.workflows.size : 0).toBe(0);
    expect(r.problems.map((p) => p.path)).toEqual(expect.arrayContaining(["constructor.prototype", "prototype.phases[0].subworkflow", "x.phases[0].constructor"]));
    assertClean();
    const clean = compileDefinitions(JSON.parse('{"constructor":{"name":"C","phases":[{"id":"a","name":"A"}]},"prototype":{"name":"P","phases":[{"subworkflow":"constructor"}]}}'));
    expect(clean.ok ? [...clean.registry.workflows.keys()] : clean.problems).toEqual(["constructor", "prototype"]);
    assertClean();
  });
  it("deeply nested garbage and long reference chains", () => {
    const depth = 20_000;
    const deep = JSON.parse(`${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`) as unknown;
    assertTypedCompile(compileDefinitions({ a: { name: "A", phases: [deep] } }));
    const chain: Record<string, unknown> = {};
    for (let i = 0; i < 3_000; i += 1) chain[`w${i}`] = { name: "W", show: false, phases: [{ subworkflow: `w${i + 1}` }] };
    chain["w3000"] = { name: "W", show: false, phases: [{ subworkflow: "w0" }] };
    const r = compileDefinitions(chain);
    expect(r.ok ? r.registry.workflows.size : 0).toBe(0);
    const cycles = r.problems.filter((p) => p.code === "DEFINITION_CYCLE");
    expect(cycles).toHaveLength(3_001);
    // Messages stay short: a long ring is abbreviated, not spelled out 3,001 times over.
    expect(cycles[0]?.message).toBe("w0.phases[0].subworkflow: is part of the reference cycle w0 → w1 → w2 → w3 → w4 → w5 → w6 → … (3001 workflows) → w0");
  });
});
