/**
 * Compatibility with pi-workflows 1.0.0 definitions, with pi-workflows' own code as the oracle (read from the
 * installed package, which vitest transpiles): definition sets are drawn from the space its validator accepts
 * (any key, any id or name with a visible character, any command name of its pattern — shared ones too — any
 * number for sessionNameMaxLength, tool names "" included), pi's loader steps decide which workflows load
 * (`validateWorkflowDefinition`, `removeCycles`, `resolveSubworkflowRefs`), and then:
 *  - every workflow pi loads, phasekit loads (no blocking problem names it);
 *  - started from the same command, both walk the same phases (same path, same phase id) to the end, with `next`.
 * Mapped mechanically to phasekit's shape: `show: "workflows"` → `show: false`, `{ subworkflow: true, workflowKey }`
 * → `{ subworkflow: workflowKey }`.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileDefinitions } from "../src/definitions/compile.js";
import type { WorkflowRegistry } from "../src/definitions/registry.js";
import { isBlocking } from "../src/errors/problems.js";
import type { WorkflowState } from "../src/state/schema.js";
import { reduce } from "../src/transitions/reduce.js";
import { resolveActive } from "../src/transitions/resolve-active.js";

interface PiPhase {
  id: string;
  name: string;
  emoji: string;
  instructions: string;
  tools?: { whitelist?: string[]; blacklist?: string[] } | undefined;
  availableProfiles?: string[] | undefined;
}
interface PiRef {
  subworkflow: true;
  workflowKey: string;
  resolved: PiDefinition | null;
}
type PiEntry = PiPhase | PiRef;
interface PiDefinition {
  name: string;
  commandName: string;
  initialMessage: string;
  show?: "user" | "workflows" | undefined;
  loopable?: boolean | undefined;
  sessionNameMaxLength?: number | undefined;
  phases: PiEntry[];
}
interface PiSegment {
  workflowKey: string;
  phaseIndex: number;
}
interface PiState {
  active: boolean;
  currentPath: PiSegment[];
}
type Defs = Record<string, PiDefinition>;
interface PiModules {
  validation: { validateWorkflowDefinition(key: string, def: PiDefinition): string | null };
  resolve: { removeCycles(d: Defs): Defs; resolveSubworkflowRefs(d: Defs): Defs };
  state: {
    createInitialState(key: string, description: string): PiState;
    autoEnterSubworkflowRefs(s: PiState, entry: PiRef): { newState: PiState };
    advancePhase(s: PiState, d: Defs): { newState: PiState };
    resolveActive(s: PiState, d: Defs): { currentPhase: PiPhase } | null;
  };
}
const PI = "../../../node_modules/@harms-haus/pi-workflows/src/";
const pi: PiModules = {
  validation: (await import(`${PI}config/validation.ts`)) as PiModules["validation"],
  resolve: (await import(`${PI}config/loading-resolve.ts`)) as PiModules["resolve"],
  state: (await import(`${PI}state.ts`)) as PiModules["state"],
};

const NUM_RUNS = process.env.CI === "true" ? 500 : 150;

/** Text pi-workflows accepts where it wants "a non-empty string" (trimmed): ids, names, emoji, instructions. */
const visible = fc
  .oneof(
    fc.constantFrom("1-research", "research.v2", "Research Phase", "a/b", "研究", "_x", "01", "constructor", "x".repeat(250)),
    fc.string({ minLength: 1, maxLength: 30 }),
    fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 }),
  )
  .filter((s) => s.trim() !== "");
/** Workflow keys are folder names: any non-empty text (not `__proto__`, which no object can hold as a key). */
const KEYS = ["2024-release", "1st-pass", "01-review", "code.review", "Review Flow", "_private", "レビュー", "k".repeat(70), " ", "rpir"];
const toolName = fc.oneof(fc.constant(""), fc.string({ maxLength: 12 }));
const phaseArb: fc.Arbitrary<PiPhase> = fc.record(
  {
    id: visible,
    name: visible,
    emoji: visible,
    instructions: visible,
    tools: fc.oneof(fc.record({ whitelist: fc.array(toolName, { maxLength: 3 }) }), fc.record({ blacklist: fc.array(toolName, { maxLength: 3 }) })),
    availableProfiles: fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }),
  },
  { requiredKeys: ["id", "name", "emoji", "instructions"] },
);
const refArb = (keys: readonly string[]): fc.Arbitrary<PiRef> => fc.constantFrom(...keys).map((k) => ({ subworkflow: true as const, workflowKey: k, resolved: null }));
/** Workflow `i` references only keys after it, so sets are acyclic (pi's detectCycles can hang on some cyclic sets). */
const defArb = (later: readonly string[]): fc.Arbitrary<PiDefinition> =>
  fc.record(
    {
      name: visible,
      commandName: fc.constantFrom("review", "codeReview", "qa_pipeline", "2024", "x-y", "a".repeat(90)),
      initialMessage: visible,
      show: fc.constantFrom("user" as const, "workflows" as const),
      loopable: fc.boolean(),
      sessionNameMaxLength: fc.oneof(fc.constantFrom(5, 1000, 0, -3), fc.double()),
      phases: fc.array(later.length === 0 ? phaseArb : fc.oneof({ weight: 3, arbitrary: phaseArb }, { weight: 1, arbitrary: refArb(later) }), { minLength: 1, maxLength: 4 }),
    },
    { requiredKeys: ["name", "commandName", "initialMessage", "phases"] },
  );
const setArb: fc.Arbitrary<Defs> = fc
  .shuffledSubarray(KEYS, { minLength: 1, maxLength: 5 })
  .chain((keys) => fc.tuple(...keys.map((_, i) => defArb(keys.slice(i + 1)))).map((defs) => Object.fromEntries(keys.map((k, i) => [k, defs[i] as PiDefinition]))));

/**
 * The workflows pi-workflows 1.0.0 loads from `set` (its loadWorkflows after reading the files) and can run. Its
 * resolveSubworkflowRefs keeps a workflow whose reference it resolved before removing the target in the same pass
 * (a → b → missing, in that key order: `a` stays, `b` goes); pi cannot run such a workflow (its resolveActive finds
 * no definition for `b` and the run vanishes), so it is not counted as accepted.
 */
function piLoads(set: Defs): Defs {
  const copy: Defs = structuredClone(set);
  const valid: Defs = {};
  for (const [key, def] of Object.entries(copy)) if (pi.validation.validateWorkflowDefinition(key, def) === null) valid[key] = def;
  const loaded = pi.resolve.resolveSubworkflowRefs(pi.resolve.removeCycles(valid));
  const runnable = (key: string): boolean => Object.hasOwn(loaded, key) && (loaded[key] as PiDefinition).phases.every((e) => !("subworkflow" in e) || runnable(e.workflowKey));
  return Object.fromEntries(Object.entries(loaded).filter(([key]) => runnable(key)));
}

function toPhasekit(set: Defs): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, def] of Object.entries(set)) {
    out[key] = {
      name: def.name,
      commandName: def.commandName,
      initialMessage: def.initialMessage,
      show: (def.show ?? "user") === "user",
      ...(def.loopable === undefined ? {} : { loopable: def.loopable }),
      ...(def.sessionNameMaxLength === undefined ? {} : { sessionNameMaxLength: def.sessionNameMaxLength }),
      phases: def.phases.map((e) => ("subworkflow" in e ? { subworkflow: e.workflowKey } : e)),
    };
  }
  return out;
}

type Position = { path: string; phaseId: string };

function piWalk(defs: Defs, key: string): Position[] {
  let s = pi.state.createInitialState(key, "task");
  const first = defs[key]?.phases[0];
  if (first !== undefined && "subworkflow" in first) s = pi.state.autoEnterSubworkflowRefs(s, first).newState;
  const out: Position[] = [];
  for (let i = 0; s.active && i < 100; i++) {
    const a = pi.state.resolveActive(s, defs);
    if (a === null) throw new Error("pi lost its position");
    out.push({ path: JSON.stringify(s.currentPath.map((g) => [g.workflowKey, g.phaseIndex])), phaseId: a.currentPhase.id });
    s = pi.state.advancePhase(s, defs).newState;
  }
  return out;
}

function phasekitWalk(registry: WorkflowRegistry, key: string): Position[] {
  const started = reduce(registry, null, { type: "start", workflowKey: key, taskId: "t", taskDescription: "task" }, { now: 1 });
  if (!started.ok) throw new Error(started.error.message);
  let s: WorkflowState = started.state;
  const out: Position[] = [];
  for (let i = 0; s.status === "running" && i < 100; i++) {
    const a = resolveActive(registry, s);
    if (!a.ok || a.active === null) throw new Error(`phasekit lost its position: ${a.ok ? "finished" : a.error.message}`);
    out.push({ path: JSON.stringify(s.currentPath.map((g) => [g.workflowKey, g.phaseIndex])), phaseId: a.active.phase.id });
    const r = reduce(registry, s, { type: "advance" }, { now: 2 + i });
    if (!r.ok) throw new Error(r.error.message);
    s = r.state;
  }
  expect(s.status).toBe("completed");
  return out;
}

describe("pi-workflows 1.0.0 definitions (pi's own validator and loader as the oracle)", () => {
  it("the names the issue found refused load: phase ids, folder names, sessionNameMaxLength 5 and 1000, long names, shared commands, empty tool names", () => {
    const phase = (id: string): PiPhase => ({ id, name: "N".repeat(250), emoji: "🔍", instructions: "do it", tools: { blacklist: [""] } });
    const set: Defs = {
      "2024-release": { name: "R", commandName: "release", initialMessage: "go", sessionNameMaxLength: 5, phases: [phase("1-research"), phase("research.v2"), { subworkflow: true, workflowKey: "code.review", resolved: null }] },
      "code.review": { name: "C", commandName: "release", initialMessage: "go", sessionNameMaxLength: 1000, phases: [phase("Research Phase")] },
    };
    expect(Object.keys(piLoads(set)).sort()).toEqual(["2024-release", "code.review"]);
    const r = compileDefinitions(toPhasekit(set));
    if (!r.ok) throw new Error(r.error.message);
    expect(r.problems.map((p) => [p.code, p.severity])).toEqual([["DUPLICATE_COMMAND_NAME", "warning"], ["DUPLICATE_COMMAND_NAME", "warning"]]);
    expect(phasekitWalk(r.registry, "2024-release")).toEqual(piWalk(piLoads(set), "2024-release"));
  });

  it(`every workflow pi loads, phasekit loads, and both walk the same phases (${NUM_RUNS} sets from pi's space)`, () => {
    let loaded = 0;
    fc.assert(
      fc.property(setArb, (set) => {
        const piDefs = piLoads(set);
        const r = compileDefinitions(toPhasekit(set), { keepHealthy: true });
        if (!r.ok) throw new Error(r.error.message);
        const blocking = r.problems.filter(isBlocking).filter((p) => p.workflowKey !== undefined && Object.hasOwn(piDefs, p.workflowKey));
        expect(blocking.map((p) => p.message)).toEqual([]);
        for (const key of Object.keys(piDefs)) {
          expect(r.registry.workflows.has(key)).toBe(true);
          loaded += 1;
          if ((piDefs[key]?.show ?? "user") !== "user") continue;
          expect(phasekitWalk(r.registry, key)).toEqual(piWalk(piDefs, key));
        }
      }),
      { numRuns: NUM_RUNS },
    );
    expect(loaded).toBeGreaterThan(NUM_RUNS);
  });
});
