/**
 * Issue 18, the definitions boundary: definitions are read once as own, plain data; one input shape (keys are
 * never guessed from values, nothing is dropped in silence); a compiled registry and the template allowlists
 * cannot be changed. Each `it` named "why:" failed on the code before issue 18.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { compileDefinitions } from "../src/definitions/compile.js";
import type { CompileResult } from "../src/definitions/compile.js";
import { PROMPT_VARS, BLOCK_REASON_VARS, renderTemplate } from "../src/definitions/template.js";
import { buildDefinitions, workflowShape } from "./helpers/model-definitions.js";

const phase = (id: string): { id: string; name: string } => ({ id, name: id.toUpperCase() });
const keysOf = (r: CompileResult): string[] => (r.ok ? [...r.registry.workflows.keys()].sort() : []);

describe("definitions are read as own, plain data", () => {
  it("why: a self-referencing workflow built with Object.create is a typed refusal, not an out-of-heap crash", () => {
    const defaults = { name: "A", phases: [{ subworkflow: "a" }] };
    const r = compileDefinitions({ a: Object.create(defaults) as object });
    expect(r.ok).toBe(false);
    expect(r.problems[0]).toMatchObject({ code: "INVALID_DEFINITION", workflowKey: "a" });
    expect(r.problems[0]?.message).toMatch(/^a\.(name|phases): is inherited from a prototype/);
  });
  it("why: inherited dangling references, duplicate ids and both tool lists no longer compile ok", () => {
    const inherit = (fields: object, own: object = {}): object => Object.assign(Object.create(fields) as object, own);
    const cases = [
      inherit({ phases: [{ subworkflow: "missing" }] }, { name: "D" }),
      inherit({ phases: [phase("x"), phase("x")] }, { name: "Dup" }),
      { name: "T", phases: [inherit({ tools: { whitelist: ["a"], blacklist: ["b"] } }, phase("x"))] },
    ];
    for (const def of cases) {
      const r = compileDefinitions({ w: def });
      expect(r.ok).toBe(false);
      expect(r.problems.map((p) => p.message).join("\n")).toContain("is inherited from a prototype");
    }
  });
  it("a getter is refused by name and never called", () => {
    let calls = 0;
    const def = { name: "G", get phases() {
      calls += 1;
      return [phase("x")];
    } };
    const r = compileDefinitions({ g: def, ok: { name: "O", phases: [phase("y")] } }, { keepHealthy: true });
    expect(calls).toBe(0);
    expect(keysOf(r)).toEqual(["ok"]);
    expect(r.problems).toEqual([expect.objectContaining({ path: "g.phases", workflowKey: "g", message: expect.stringContaining("is an accessor") })]);
  });
  it("Maps, class instances with methods and cycles inside a definition are named", () => {
    class Phase {
      id = "x";
      name = "X";
      describe(): string {
        return this.name;
      }
    }
    const cyclic: Record<string, unknown> = { name: "C", phases: [phase("x")] };
    cyclic["self"] = cyclic;
    const r = compileDefinitions({ m: { name: "M", phases: new Map() }, c: { name: "K", phases: [new Phase()] }, y: cyclic });
    const byKey = new Map(r.problems.map((p) => [p.workflowKey, p.message]));
    expect(byKey.get("m")).toBe("m.phases: is a Map, not plain data; write a plain object or array");
    expect(byKey.get("c")).toContain("c.phases[0].describe: is inherited from a prototype");
    expect(byKey.get("y")).toContain("y.self: refers back to an object that contains it");
  });
  it("workflows inherited by the top-level object are named, never silently ignored", () => {
    const top = Object.assign(Object.create({ hidden: { name: "H", phases: [phase("h")] } }) as object, { shown: { name: "S", phases: [phase("s")] } });
    const r = compileDefinitions(top, { keepHealthy: true });
    expect(keysOf(r)).toEqual(["shown"]);
    expect(r.problems.map((p) => p.workflowKey)).toEqual(["hidden"]);
  });
});

describe("one input shape: the workflows by key", () => {
  const good = { name: "Good", phases: [phase("g")] };
  it("why: a top-level 'workflows' entry never hides its siblings", () => {
    const r = compileDefinitions({ workflows: { description: "oops" }, good }, { keepHealthy: true });
    expect(keysOf(r)).toEqual(["good"]);
    expect(r.problems.every((p) => p.workflowKey === "workflows")).toBe(true);
    expect(r.problems[0]?.hint).toContain("compileDefinitions(doc.workflows)");
  });
  it("why: a settings document is not unwrapped by the shape of its 'workflows' value", () => {
    const r = compileDefinitions({ workflows: { name: "oops", review: good } });
    // "workflows" is a workflow key like any other: its problems name it, with the hint for a settings document.
    expect(r.problems.map((p) => p.path).sort()).toEqual(["workflows.phases", "workflows.review"]);
    expect(r.problems.every((p) => p.hint.includes("compileDefinitions(doc.workflows)"))).toBe(true);
    expect(compileDefinitions({ review: good }).ok).toBe(true);
  });
  it("why: a Map entry whose key is not a string is a problem at the root, not a silent drop", () => {
    const r = compileDefinitions(new Map<unknown, unknown>([[1, good], ["good", good]]), { keepHealthy: true });
    expect(keysOf(r)).toEqual(["good"]);
    expect(r.problems).toEqual([expect.objectContaining({ code: "INVALID_DEFINITION", path: "(root)", message: "(root): Map entry 0 has the key 1, not a string, so it names no workflow" })]);
    expect(compileDefinitions(new Map([[Symbol("s"), good]])).ok).toBe(false);
  });
});

describe("a compiled registry and the allowlists are immutable in fact", () => {
  it("why: Map.prototype.set.call cannot add a workflow to a compiled registry", () => {
    const r = compileDefinitions({ a: { name: "A", phases: [phase("x")] } });
    if (!r.ok) throw new Error(r.error.message);
    const { workflows } = r.registry;
    const intruder = { name: "I", phases: [{ subworkflow: "intruder" }] };
    expect(() => Map.prototype.set.call(workflows, "intruder", intruder)).toThrow(TypeError);
    expect(() => Map.prototype.delete.call(workflows, "a")).toThrow(TypeError);
    expect(() => (workflows as unknown as { set: unknown }).set).not.toThrow();
    expect((workflows as unknown as { set?: unknown }).set).toBeUndefined();
    expect([...workflows.keys()]).toEqual(["a"]);
    expect(Object.isFrozen(workflows) && Object.isFrozen(r.registry)).toBe(true);
  });
  it("why: a template allowlist cannot be widened to expose another variable", () => {
    expect(() => Set.prototype.add.call(BLOCK_REASON_VARS, "taskId")).toThrow(TypeError);
    expect((PROMPT_VARS as unknown as { add?: unknown }).add).toBeUndefined();
    expect(renderTemplate("{taskId}", { taskId: "t" }, BLOCK_REASON_VARS)).toBe("{taskId}");
  });
});

/** A definition object disguised the way code builds one: a prototype holding some fields, a getter, a Map. */
type Disguise = "plain" | "proto" | "getter" | "map";
const disguise = fc.constantFrom<Disguise>("plain", "plain", "plain", "proto", "getter", "map");

function disguised(value: Record<string, unknown>, how: Disguise, pick: number): object {
  const fields = Object.keys(value);
  const field = fields[pick % fields.length] as string;
  if (how === "proto") {
    const { [field]: inherited, ...own } = value;
    return Object.assign(Object.create({ [field]: inherited }) as object, own);
  }
  if (how === "getter") {
    const { [field]: got, ...own } = value;
    return Object.defineProperty({ ...own }, field, { get: () => got, enumerable: true });
  }
  if (how === "map") return new Map(Object.entries(value));
  return value;
}

describe("property: definitions built with prototypes, getters and Maps", () => {
  const runs = process.env.CI === "true" ? 500 : 150;
  it("compile never throws, never hangs, refuses every disguised workflow and never drops one silently", () => {
    const input = fc.record({
      shapes: fc.array(workflowShape, { minLength: 3, maxLength: 6 }),
      workflowDisguises: fc.array(fc.tuple(disguise, fc.nat()), { minLength: 6, maxLength: 6 }),
      phaseDisguises: fc.array(fc.tuple(disguise, fc.nat()), { minLength: 24, maxLength: 24 }),
      top: fc.constantFrom("object", "map", "proto"),
      oddKeys: fc.uniqueArray(fc.oneof(fc.integer(), fc.constant(null), fc.boolean()), { maxLength: 2 }),
    });
    fc.assert(
      fc.property(input, ({ shapes, workflowDisguises, phaseDisguises, top, oddKeys }) => {
        const plain = buildDefinitions(shapes) as Record<string, { phases: Array<Record<string, unknown>> } & Record<string, unknown>>;
        const tainted = new Set<string>();
        let n = 0;
        const built = Object.entries(plain).map(([key, def], i) => {
          const phases = def.phases.map((p) => {
            const [how, pick] = phaseDisguises[n++ % phaseDisguises.length] as [Disguise, number];
            if (how !== "plain") tainted.add(key);
            return disguised(p, how, pick);
          });
          const [how, pick] = workflowDisguises[i] as [Disguise, number];
          if (how !== "plain") tainted.add(key);
          return [key, disguised({ ...def, phases }, how, pick)] as const;
        });
        const [inheritedEntry, ...ownEntries] = built;
        let raw: unknown;
        if (top === "map") raw = new Map<unknown, unknown>([...built, ...oddKeys.map((k) => [k, plain["w0"]] as const)]);
        else if (top === "proto") raw = Object.assign(Object.create(Object.fromEntries([inheritedEntry as readonly [string, object]])) as object, Object.fromEntries(ownEntries));
        else raw = Object.fromEntries(built);
        if (top === "proto") tainted.add((inheritedEntry as readonly [string, object])[0]);
        let r: CompileResult | undefined;
        expect(() => (r = compileDefinitions(raw, { keepHealthy: true }))).not.toThrow();
        const result = r as CompileResult;
        expect(result.ok).toBe(true);
        const kept = new Set(keysOf(result));
        const named = new Set(result.problems.map((p) => p.workflowKey));
        for (const key of Object.keys(plain)) {
          // Never silent: every workflow is compiled or named by a problem; a disguised one is never compiled.
          expect(kept.has(key) || named.has(key)).toBe(true);
          if (tainted.has(key)) expect(kept.has(key)).toBe(false);
        }
        if (top === "map") expect(result.problems.filter((p) => p.path === "(root)")).toHaveLength(oddKeys.length);
        if (tainted.size === 0 && (top !== "map" || oddKeys.length === 0)) expect(result.problems).toEqual([]);
      }),
      { numRuns: runs },
    );
  });
});
