import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { compileDefinitions, definitionProblemsError } from "../src/definitions/compile.js";
import type { CompileResult } from "../src/definitions/compile.js";

const phase = (id: string, extra: object = {}): object => ({ id, name: id.toUpperCase(), ...extra });
const wf = (phases: unknown[], extra: object = {}): object => ({ name: "W", phases, ...extra });
const codes = (r: CompileResult): string[] => r.problems.map((p) => p.code);
/** The registry of an accepted compile (a failed one fails the test). */
const reg = (r: CompileResult) => {
  if (!r.ok) throw new Error(`expected a registry, got ${r.error.message}`);
  return r.registry;
};
const keys = (r: CompileResult): string[] => (r.ok ? [...r.registry.workflows.keys()] : []);
/** Compiles the healthy workflows of a set with problems (each left-out one is a listed problem). */
const lenient = (raw: unknown): CompileResult => compileDefinitions(raw, { keepHealthy: true });
const runs = process.env.CI === "true" ? 1_000 : 100;

describe("compileDefinitions: valid input", () => {
  const defs = {
    release: wf([phase("build"), { subworkflow: "review" }, phase("ship")], { name: "Release Pipeline" }),
    review: wf([phase("lint", { tools: { whitelist: ["read"] }, availableProfiles: ["critic"] })], { show: false, profiles: [{ name: "critic" }] }),
    hotfix: wf([phase("fix")], { commandName: "fix-now" }),
  };
  it("returns every workflow with defaults applied and no problems", () => {
    const r = compileDefinitions(defs);
    expect(r).toMatchObject({ ok: true, problems: [] });
    expect(keys(r)).toEqual(["release", "review", "hotfix"]);
    expect(reg(r).workflows.get("release")).toMatchObject({ loopable: true, show: true, profiles: [], description: "" });
    expect(reg(r).workflows.get("review")?.phases[0]).toMatchObject({ emoji: "", instructions: "" });
  });
  it("maps shown command names to keys (commandName, else the key), never hidden workflows", () => {
    const r = compileDefinitions(defs);
    expect([...reg(r).commands]).toEqual([["release", "release"], ["fix-now", "hotfix"]]);
  });
  it("accepts a map by key and a Map alike; a settings document is never unwrapped by guessing", () => {
    const b = compileDefinitions(defs);
    const c = compileDefinitions(new Map(Object.entries(defs)));
    expect(c).toEqual(b);
    const doc = compileDefinitions({ workflows: defs, otherSetting: true }, { keepHealthy: true });
    expect(doc.problems.map((p) => p.workflowKey)).toEqual(expect.arrayContaining(["otherSetting", "workflows"]));
    expect(doc.problems.find((p) => p.workflowKey === "workflows")?.hint).toContain("compileDefinitions(doc.workflows)");
  });
  it("takes a workflow literally named 'workflows' as a workflow, not the wrapper", () => {
    const r = compileDefinitions({ workflows: wf([phase("a")]) });
    expect(keys(r)).toEqual(["workflows"]);
  });
  it("does not write to its input", () => {
    const raw = JSON.parse(JSON.stringify(defs));
    const before = JSON.stringify(raw);
    compileDefinitions(raw);
    expect(JSON.stringify(raw)).toBe(before);
  });
});

describe("compileDefinitions: every problem kind", () => {
  const only = (raw: unknown) => {
    const r = compileDefinitions(raw);
    expect(r.ok).toBe(false);
    return r.problems;
  };
  it("zod shape errors with readable paths and the value found", () => {
    const [p] = only({ a: wf([phase("x", { name: 7 })]) });
    expect(p).toMatchObject({ code: "INVALID_DEFINITION", path: "a.phases[0].name", workflowKey: "a" });
    expect(p?.message).toBe("a.phases[0].name: expected a string, got 7");
  });
  it("a malformed phase id, in the schema's own words (any text with a visible character is an id, as in pi-workflows)", () => {
    const [p] = only({ a: wf([phase(" \t")]) });
    expect(p?.message).toBe('a.phases[0].id: must contain a visible character, got " \\t"');
    for (const id of ["1st", "1-research", "research.v2", "Research Phase", "a/b", "研究"]) expect(compileDefinitions({ a: wf([phase(id)]) }).ok).toBe(true);
  });
  it("unknown fields, with the known ones in the hint", () => {
    const [p] = only({ a: wf([phase("x", { tols: {} })]) });
    expect(p).toMatchObject({ path: "a.phases[0].tols", message: 'a.phases[0].tols: unknown field "tols"' });
    expect(p?.hint).toContain("tools");
  });
  it("a phase entry that mixes a phase and a reference is checked as a reference", () => {
    const ps = only({ a: wf([{ id: "x", name: "X", subworkflow: "a" }]) });
    expect(ps.map((p) => p.path)).toContain("a.phases[0].id");
  });
  it("a phase entry that is no object", () => {
    expect(only({ a: wf([5]) })[0]?.message).toContain("a.phases[0]: expected a phase object");
  });
  it("dangling references", () => {
    const [p] = only({ a: wf([{ subworkflow: "ghost" }]) });
    expect(p).toMatchObject({ code: "DANGLING_REFERENCE", path: "a.phases[0].subworkflow" });
    expect(p?.message).toContain('"ghost" does not exist');
  });
  it("cycles, reported as a → b → a for each member", () => {
    const ps = only({ a: wf([phase("p"), { subworkflow: "b" }]), b: wf([{ subworkflow: "a" }]) });
    expect(ps).toHaveLength(2);
    expect(ps[0]).toMatchObject({ code: "DEFINITION_CYCLE", path: "a.phases[1].subworkflow" });
    expect(ps[0]?.message).toContain("a → b → a");
    expect(ps[1]?.message).toContain("b → a → b");
  });
  it("a workflow that references itself", () => {
    expect(only({ a: wf([{ subworkflow: "a" }]) })[0]?.message).toContain("a → a");
  });
  it("duplicate phase ids within one workflow (not across workflows)", () => {
    const ps = only({ a: wf([phase("x"), phase("y"), phase("x")]), b: wf([phase("x")]) });
    expect(ps).toEqual([expect.objectContaining({ code: "DUPLICATE_PHASE_ID", path: "a.phases[2].id" })]);
  });
  it("whitelist and blacklist together", () => {
    const [p] = only({ a: wf([phase("x", { tools: { whitelist: [], blacklist: ["bash"] } })]) });
    expect(p).toMatchObject({ code: "TOOL_LISTS_CONFLICT", path: "a.phases[0].tools" });
  });
  it("bad command names, and shown keys that are no command name", () => {
    expect(only({ a: wf([phase("x")], { commandName: "Bad Name" }) })[0]).toMatchObject({ code: "INVALID_COMMAND_NAME", path: "a.commandName" });
    // pi-workflows 1.0.0 accepts /^[a-zA-Z0-9_-]+$/ command names, so keys like codeReview work as commands.
    expect([...reg(compileDefinitions({ codeReview: wf([phase("x")]) })).commands]).toEqual([["codeReview", "codeReview"]]);
    expect([...reg(compileDefinitions({ qa_pipeline: wf([phase("x")]) })).commands]).toEqual([["qa_pipeline", "qa_pipeline"]]);
  });
  it("duplicate command names across workflows: a warning on every workflow that uses the name, both load (as in pi-workflows)", () => {
    const r = compileDefinitions({ go: wf([phase("y")]), a: wf([phase("x")], { commandName: "go" }), c: wf([phase("z")], { commandName: "go", show: false }) });
    if (!r.ok) throw new Error(r.error.message);
    expect(r.problems.map((p) => [p.code, p.workflowKey, p.severity])).toEqual([["DUPLICATE_COMMAND_NAME", "a", "warning"], ["DUPLICATE_COMMAND_NAME", "go", "warning"]]);
    expect(r.problems[0]?.message).toContain('"/go" is also used by workflow "go"; this workflow answers it');
    expect([...r.registry.workflows.keys()].sort()).toEqual(["a", "c", "go"]);
    expect(r.registry.commands.get("go")).toBe("a"); // the first key by code unit, whatever the order read
  });
  it("empty phases", () => {
    expect(only({ a: wf([]) })[0]).toMatchObject({ code: "EMPTY_PHASES", path: "a.phases" });
  });
  it("unknown availableProfiles", () => {
    const [p] = only({ a: wf([phase("x", { availableProfiles: ["known", "nope"] })], { profiles: [{ name: "known" }] }) });
    expect(p).toMatchObject({ code: "UNKNOWN_PROFILE", path: "a.phases[0].availableProfiles[1]" });
  });
  it("bad and reserved workflow keys; pi-workflows' folder names are keys", () => {
    const ps = only(JSON.parse('{"": {"name":"W","phases":[{"id":"x","name":"X"}],"show":false}, "__proto__": {"name":"W","phases":[{"id":"x","name":"X"}],"show":false}}'));
    expect(ps.map((p) => [p.code, p.path])).toEqual([["INVALID_DEFINITION", "[\"\"]"], ["INVALID_DEFINITION", "__proto__"]]);
    const names = [" ", "9lives", "2024-release", "1st-pass", "01-review", "code.review", "Review Flow", "_private", "constructor", "レビュー", "x".repeat(70)];
    const r = compileDefinitions(Object.fromEntries(names.map((k) => [k, wf([phase("x")], { show: false })])));
    expect(r.ok ? [...r.registry.workflows.keys()].sort() : r.error.message).toEqual([...names].sort());
  });
  it("an input that is no object", () => {
    for (const raw of [null, 3, "x", [wf([])]]) expect(only(raw)).toEqual([expect.objectContaining({ code: "INVALID_DEFINITION", path: "(root)" })]);
  });
  it("reports all problems of all workflows at once", () => {
    const r = lenient({
      a: wf([phase("x"), phase("x", { tools: { whitelist: [], blacklist: [] } }), { subworkflow: "ghost" }], { commandName: "A!" }),
      b: wf([]),
      c: wf([{ subworkflow: "c" }]),
      ok: wf([phase("x")]),
    });
    expect(new Set(codes(r))).toEqual(new Set(["DUPLICATE_PHASE_ID", "TOOL_LISTS_CONFLICT", "DANGLING_REFERENCE", "INVALID_COMMAND_NAME", "EMPTY_PHASES", "DEFINITION_CYCLE"]));
    expect(keys(r)).toEqual(["ok"]);
  });
  it("definitionProblemsError summarises the problems in one typed error", () => {
    const r = compileDefinitions({ a: wf([]), b: wf([]) });
    const e = definitionProblemsError(r.problems, "settings.json");
    expect(e).toMatchObject({ code: "EMPTY_PHASES", details: { file: "settings.json", path: "a.phases" } });
    expect(e.message).toMatch(/^\[phasekit\] \[definitions\] settings\.json: a\.phases: has no phases \(and 1 more/);
  });
});

describe("compileDefinitions: removal of broken workflows", () => {
  it("removes the whole chain A → B → C → missing Z, whatever the key order (seed bug)", () => {
    const chain = { A: wf([{ subworkflow: "B" }], { show: false }), B: wf([{ subworkflow: "C" }], { show: false }), C: wf([{ subworkflow: "Z" }], { show: false }), ok: wf([phase("x")]) };
    for (const order of [["A", "B", "C", "ok"], ["C", "B", "A", "ok"], ["ok", "B", "A", "C"]]) {
      const r = lenient(Object.fromEntries(order.map((k) => [k, chain[k as keyof typeof chain]])));
      expect(keys(r)).toEqual(["ok"]);
      expect(r.problems.map((p) => [p.workflowKey, p.code])).toEqual([["A", "DANGLING_REFERENCE"], ["B", "DANGLING_REFERENCE"], ["C", "DANGLING_REFERENCE"]]);
    }
  });
  it("keeps healthy workflows in the registry when others fail", () => {
    const strict = compileDefinitions({ good: wf([phase("x"), { subworkflow: "inner" }]), inner: wf([phase("y")], { show: false }), bad: wf([]) });
    expect(strict.ok).toBe(false);
    const r = lenient({ good: wf([phase("x"), { subworkflow: "inner" }]), inner: wf([phase("y")], { show: false }), bad: wf([]) });
    expect(r.problems.map((p) => p.workflowKey)).toEqual(["bad"]);
    expect(keys(r)).toEqual(["good", "inner"]);
    expect([...reg(r).commands]).toEqual([["good", "good"]]);
  });
  it("removes a workflow that leads into a cycle, without calling it part of the cycle", () => {
    const r = lenient({ top: wf([{ subworkflow: "x" }]), x: wf([{ subworkflow: "y" }], { show: false }), y: wf([{ subworkflow: "x" }], { show: false }) });
    expect(keys(r)).toEqual([]);
    expect(r.problems.map((p) => [p.workflowKey, p.code])).toEqual([["top", "DANGLING_REFERENCE"], ["x", "DEFINITION_CYCLE"], ["y", "DEFINITION_CYCLE"]]);
  });
});

const POOL = ["a", "b", "c", "d", "e", "f"];
const entryArb = fc.oneof(
  fc.constantFrom(...POOL, "zz").map((k) => ({ subworkflow: k })),
  fc.constantFrom("p", "q", "r").map((id) => phase(id)),
);
const defArb = fc.record({
  phases: fc.array(entryArb, { maxLength: 4 }),
  show: fc.boolean(),
  cmd: fc.option(fc.constantFrom("go", "run", "Bad!"), { nil: undefined }),
  broken: fc.boolean(),
});
const setArb = fc.uniqueArray(fc.tuple(fc.constantFrom(...POOL), defArb), { selector: (t) => t[0], maxLength: POOL.length });

describe("compileDefinitions: key order never matters (property)", () => {
  it("shuffled keys give the same registry and the same problems", () => {
    fc.assert(
      fc.property(setArb.chain((set) => fc.tuple(fc.constant(set), fc.shuffledSubarray(set, { minLength: set.length }))), ([set, shuffled]) => {
        const toRaw = (s: typeof set): Record<string, object> =>
          Object.fromEntries(s.map(([k, d]) => [k, wf(d.phases, { show: d.show, ...(d.cmd ? { commandName: d.cmd } : {}), ...(d.broken ? { name: "" } : {}) })]));
        const a = lenient(toRaw(set));
        const b = lenient(toRaw(shuffled));
        const sorted = <V>(m: ReadonlyMap<string, V>): Array<[string, V]> => [...m].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
        expect(sorted(reg(b).workflows)).toEqual(sorted(reg(a).workflows));
        expect(sorted(reg(b).commands)).toEqual(sorted(reg(a).commands));
        expect(b.problems).toEqual(a.problems);
        // The registry is closed: every reference of a kept workflow is kept too; every removed one is explained.
        for (const def of reg(a).workflows.values()) {
          for (const e of def.phases) if ("subworkflow" in e) expect(reg(a).workflows.has(e.subworkflow)).toBe(true);
        }
        for (const [k] of set) if (!reg(a).workflows.has(k)) expect(a.problems.some((p) => p.workflowKey === k)).toBe(true);
      }),
      { numRuns: runs },
    );
  });
});
