/**
 * Compatibility with pi-workflows 1.0.0 definitions: every definition set its own validation accepts
 * (`validateWorkflowDefinition` per workflow, `detectCycles` over the set, read from the installed package)
 * compiles in phasekit once mapped mechanically to phasekit's shape: `show: "workflows"` → `show: false`, and a
 * reference `{ subworkflow: true, workflowKey }` → `{ subworkflow: workflowKey }`. Keys such as `codeReview` and
 * `qa_pipeline` are workflow keys and command names in both.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileDefinitions } from "../src/definitions/compile.js";

/** The parts of pi-workflows' definition type this test uses (its sources are TS without extensions). */
interface PiPhase {
  id: string;
  name: string;
  emoji: string;
  instructions: string;
  tools?: { whitelist?: string[]; blacklist?: string[] } | undefined;
}
type PiEntry = PiPhase | { subworkflow: true; workflowKey: string; resolved: null };
interface PiDefinition {
  name: string;
  commandName: string;
  initialMessage: string;
  show?: "user" | "workflows" | undefined;
  loopable?: boolean | undefined;
  phases: PiEntry[];
}
interface PiValidation {
  validateWorkflowDefinition(key: string, def: PiDefinition): string | null;
  detectCycles(definitions: Record<string, PiDefinition>): string[];
}
// Loaded by path from the installed package (vitest transpiles its TypeScript sources); typed above.
const PI_VALIDATION: string = "../../../node_modules/@harms-haus/pi-workflows/src/config/validation.ts";
const { validateWorkflowDefinition, detectCycles } = (await import(PI_VALIDATION)) as PiValidation;

const NUM_RUNS = process.env.CI === "true" ? 500 : 100;
const KEYS = ["codeReview", "qa_pipeline", "release", "hot-fix", "Deploy2", "x"];
const word = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_-]{0,20}$/);

const phaseArb = fc.record({
  id: word,
  name: fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim() !== ""),
  emoji: fc.constantFrom("🔍", "📦", "✅", "x"),
  instructions: fc.string({ minLength: 1, maxLength: 60 }).filter((s) => s.trim() !== ""),
  tools: fc.option(fc.oneof(fc.record({ whitelist: fc.array(word, { maxLength: 3 }) }), fc.record({ blacklist: fc.array(word, { maxLength: 3 }) })), { nil: undefined }),
});
const entryArb = fc.oneof({ weight: 3, arbitrary: phaseArb }, { weight: 1, arbitrary: fc.constantFrom(...KEYS).map((k) => ({ subworkflow: true as const, workflowKey: k, resolved: null })) });
const defArb = fc.record({
  name: fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim() !== ""),
  commandName: fc.option(fc.stringMatching(/^[a-zA-Z0-9_-]{1,30}$/), { nil: undefined }),
  initialMessage: fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim() !== ""),
  show: fc.option(fc.constantFrom("user" as const, "workflows" as const), { nil: undefined }),
  loopable: fc.option(fc.boolean(), { nil: undefined }),
  phases: fc.array(entryArb, { minLength: 1, maxLength: 4 }),
});
const setArb = fc.uniqueArray(fc.tuple(fc.constantFrom(...KEYS), defArb), { selector: (t) => t[0], minLength: 1, maxLength: KEYS.length });

/** pi-workflows' own verdict on a set: every workflow valid, every reference present, no cycle, no duplicate command. */
function piAccepts(set: Record<string, PiDefinition>): boolean {
  for (const [key, def] of Object.entries(set)) {
    if (validateWorkflowDefinition(key, def) !== null) return false;
    for (const e of def.phases) if ("subworkflow" in e && !(e.workflowKey in set)) return false;
  }
  // pi-workflows refuses cycles, but its detectCycles never returns on some cyclic sets (e.g. b → c, c → c and
  // c → b: its cycle reconstruction loops until the heap is gone), so cyclic sets are decided here first.
  if (hasCycle(set) || detectCycles(set).length > 0) return false;
  const shown = Object.values(set).filter((d) => (d.show ?? "user") === "user").map((d) => d.commandName);
  return new Set(shown).size === shown.length;
}

function hasCycle(set: Record<string, PiDefinition>): boolean {
  const state = new Map<string, "open" | "done">();
  const visit = (key: string): boolean => {
    if (state.get(key) === "done") return false;
    if (state.get(key) === "open") return true;
    state.set(key, "open");
    for (const e of set[key]?.phases ?? []) if ("subworkflow" in e && e.workflowKey in set && visit(e.workflowKey)) return true;
    state.set(key, "done");
    return false;
  };
  return Object.keys(set).some((k) => visit(k));
}

function toPhasekit(set: Record<string, PiDefinition>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, def] of Object.entries(set)) {
    out[key] = {
      name: def.name,
      commandName: def.commandName,
      initialMessage: def.initialMessage,
      show: (def.show ?? "user") === "user",
      ...(def.loopable === undefined ? {} : { loopable: def.loopable }),
      phases: def.phases.map((e) => ("subworkflow" in e ? { subworkflow: e.workflowKey } : e)),
    };
  }
  return out;
}

describe("pi-workflows 1.0.0 definitions", () => {
  it("keys like codeReview and qa_pipeline compile as workflows and commands", () => {
    const phase = { id: "p", name: "P", emoji: "🔍", instructions: "do it" };
    const set: Record<string, PiDefinition> = {
      codeReview: { name: "Code Review", commandName: "codeReview", initialMessage: "go", phases: [phase] },
      qa_pipeline: { name: "QA", commandName: "qa_pipeline", initialMessage: "go", phases: [phase, { subworkflow: true, workflowKey: "codeReview", resolved: null }] },
    };
    expect(piAccepts(set)).toBe(true);
    const r = compileDefinitions(toPhasekit(set));
    if (!r.ok) throw new Error(r.error.message);
    expect([...r.registry.commands]).toEqual([["codeReview", "codeReview"], ["qa_pipeline", "qa_pipeline"]]);
  });

  it(`every set pi-workflows accepts compiles (${NUM_RUNS} random sets)`, () => {
    let accepted = 0;
    fc.assert(
      fc.property(setArb, (entries) => {
        const set = Object.fromEntries(entries.map(([k, d]) => [k, { ...d, commandName: d.commandName ?? "" } as PiDefinition]));
        if (!piAccepts(set)) return;
        accepted += 1;
        const r = compileDefinitions(toPhasekit(set));
        expect(r.ok ? [] : r.problems.map((p) => p.message)).toEqual([]);
      }),
      { numRuns: NUM_RUNS },
    );
    expect(accepted).toBeGreaterThan(0);
  });
});
