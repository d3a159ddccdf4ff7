/**
 * compileDefinitions: raw workflow definitions (from settings files) → a registry of the healthy workflows plus
 * every problem found, all at once. A workflow is removed when it has problems of its own, sits in a reference
 * cycle, or references (transitively) a missing or removed workflow; the outcome never depends on key order.
 */
import type { WorkflowError } from "../errors/workflow-error.js";
import type { WorkflowDefinition } from "./schema.js";
import { MAX_NESTING, sealRegistry, type WorkflowRegistry } from "./registry.js";
import { refusal, refusalToError, type Refusal } from "../errors/refusal.js";
import { workflowFingerprint } from "./fingerprint.js";
import { graphFacts, type GraphFacts } from "./fold.js";
import { describeValue } from "../errors/problems.js";
import { isBlocking, type DefinitionProblem } from "../errors/problems.js";
import { keyProblems, problemAt, resolvedCommand, shapeProblems, structureProblems } from "./checks.js";
import { templateProblems } from "./template-check.js";
import { gateProblems } from "./gate-checks.js";
import { byCodeUnit, cyclicComponents, healthyKeys, shortestCycle } from "./graph.js";
import type { ReferenceGraph } from "./graph.js";
import { readWorkflows, referencesOf, viewWorkflow } from "./raw.js";
import type { RawSet, RawWorkflow, RawWorkflowView } from "./raw.js";

/** The refusal codes of compileDefinitions: the first problem's code (every problem is in `details.problems`), or INVALID_OPTIONS for bad options. */
export type CompileCode = DefinitionProblem["code"] | "INVALID_OPTIONS";

/**
 * The outcome of compileDefinitions: a registry of every workflow, or a refusal listing every problem. With
 * `{ keepHealthy: true }` a set with problems still compiles to the healthy workflows, and `problems` names
 * every one left out (never a silent drop).
 */
export type CompileResult =
  | { readonly ok: true; readonly registry: WorkflowRegistry; readonly problems: readonly DefinitionProblem[] }
  | { readonly ok: false; readonly error: Refusal<CompileCode>; readonly problems: readonly DefinitionProblem[] };

/** Options of compileDefinitions. */
export interface CompileOptions {
  /** Compile the healthy workflows even when others have problems (each dropped one is a listed problem). */
  readonly keepHealthy?: boolean | undefined;
}

interface Compiled {
  readonly key: string;
  readonly view: RawWorkflowView;
  readonly parsed: WorkflowDefinition | undefined;
  readonly refs: Map<string, number>;
}

const SHOWN_CYCLE_KEYS = 8;

/** The first keys of `cycle` rotated to start at `at`: enough for a message, without copying a long ring. */
function rotated(cycle: readonly string[], at: number): string[] {
  const n = Math.min(cycle.length, SHOWN_CYCLE_KEYS + 1);
  return Array.from({ length: n }, (_, i) => cycle[(at + i) % cycle.length] as string);
}

/** `a → b → a`; a long cycle is shortened: `a → b → … (40 workflows) → a`. */
function cycleText(cycle: readonly string[], length: number): string {
  const start = cycle[0] ?? "";
  if (length <= SHOWN_CYCLE_KEYS) return [...cycle.slice(0, length), start].join(" → ");
  return `${cycle.slice(0, SHOWN_CYCLE_KEYS - 1).join(" → ")} → … (${length} workflows) → ${start}`;
}

function cycleProblems(graph: ReferenceGraph, compiled: ReadonlyMap<string, Compiled>): { problems: DefinitionProblem[]; inCycle: Map<string, number> } {
  const problems: DefinitionProblem[] = [];
  const inCycle = new Map<string, number>();
  const cache = new Map<string, string[]>();
  cyclicComponents(graph).forEach((members, id) => {
    const memberSet = new Set(members);
    // One search from the smallest key covers every member on that cycle (a rotation of it); only members off
    // it need their own search, so a long ring costs one search instead of one per member.
    const canonical = shortestCycle(graph, members[0] ?? "", memberSet, cache).slice(0, -1);
    const position = new Map(canonical.map((k, i) => [k, i]));
    for (const key of members) {
      inCycle.set(key, id);
      const at = position.get(key);
      const cycle = at === undefined ? shortestCycle(graph, key, memberSet, cache).slice(0, -1) : rotated(canonical, at);
      const next = cycle[1] ?? key;
      const index = compiled.get(key)?.refs.get(next) ?? 0;
      const reason = `is part of the reference cycle ${cycleText(cycle, at === undefined ? cycle.length : canonical.length)}`;
      problems.push(problemAt("DEFINITION_CYCLE", key, ["phases", index, "subworkflow"], reason, "remove one of the references so the chain ends"));
    }
  });
  return { problems, inCycle };
}

function brokenTargetProblems(compiled: ReadonlyMap<string, Compiled>, healthy: ReadonlySet<string>, inCycle: ReadonlyMap<string, number>): DefinitionProblem[] {
  const problems: DefinitionProblem[] = [];
  for (const { key, refs } of compiled.values()) {
    for (const [target, index] of refs) {
      if (!compiled.has(target) || healthy.has(target)) continue;
      // Members of one cycle already carry the cycle problem; saying "references a broken workflow" adds noise.
      if (inCycle.has(key) && inCycle.get(key) === inCycle.get(target)) continue;
      const reason = `workflow ${describeValue(target)} cannot be used: it has problems of its own (listed with it)`;
      problems.push(problemAt("DANGLING_REFERENCE", key, ["phases", index, "subworkflow"], reason, `fix ${describeValue(target)} first`));
    }
  }
  return problems;
}

function duplicateCommandProblems(compiled: ReadonlyMap<string, Compiled>): DefinitionProblem[] {
  const users = new Map<string, string[]>();
  for (const { key, view } of compiled.values()) {
    const name = view.show ? resolvedCommand(key, view) : undefined;
    if (name === undefined) continue;
    users.set(name, [...(users.get(name) ?? []), key]);
  }
  const problems: DefinitionProblem[] = [];
  for (const [name, keys] of users) {
    if (keys.length < 2) continue;
    for (const key of keys) {
      const others = keys.filter((k) => k !== key).sort(byCodeUnit).map((k) => JSON.stringify(k)).join(", ");
      // pi-workflows warns and loads both: so does phasekit. The first key by code unit answers the command, so
      // the outcome does not depend on the order the folders were read in.
      const owner = commandOwner(keys);
      const first = owner === key ? "this workflow answers it" : `workflow ${JSON.stringify(owner)} answers it`;
      const reason = `the command "/${name}" is also used by workflow ${others}; ${first}`;
      problems.push({ ...problemAt("DUPLICATE_COMMAND_NAME", key, ["commandName"], reason, "give each shown workflow its own commandName"), severity: "warning" });
    }
  }
  return problems;
}

/** Which of the workflows sharing a command answers it: the first key by code unit. */
function commandOwner(keys: readonly string[]): string {
  return [...keys].sort(byCodeUnit)[0] ?? "";
}

function compileEach(raws: readonly RawWorkflow[]): { compiled: Map<string, Compiled>; problems: DefinitionProblem[] } {
  const present = new Set(raws.map((r) => r.key));
  const compiled = new Map<string, Compiled>();
  const problems: DefinitionProblem[] = [];
  for (const { key, def, unreadable } of raws) {
    if (unreadable !== undefined) {
      // Not plain data: nothing in it is read, so it references nothing; its referrers are told it is broken.
      problems.push(...keyProblems(key), problemAt("INVALID_DEFINITION", key, unreadable.path, unreadable.reason, "pass plain data (JSON-like objects and arrays)"));
      compiled.set(key, { key, view: viewWorkflow(undefined), parsed: undefined, refs: new Map() });
      continue;
    }
    const view = viewWorkflow(def);
    const shape = shapeProblems(key, def);
    problems.push(...keyProblems(key), ...shape.problems, ...structureProblems(key, view, (k) => present.has(k)));
    if (shape.parsed !== undefined) problems.push(...templateProblems(key, shape.parsed), ...gateProblems(key, shape.parsed));
    compiled.set(key, { key, view, parsed: shape.parsed, refs: referencesOf(view) });
  }
  return { compiled, problems };
}

function buildRegistry(raws: readonly RawWorkflow[], compiled: ReadonlyMap<string, Compiled>, healthy: ReadonlySet<string>): Map<string, WorkflowDefinition> {
  const workflows = new Map<string, WorkflowDefinition>();
  for (const { key } of raws) {
    const entry = compiled.get(key);
    if (entry?.parsed === undefined || !healthy.has(key)) continue;
    workflows.set(key, entry.parsed);
  }
  return workflows;
}

function seal(workflows: ReadonlyMap<string, WorkflowDefinition>, compiled: ReadonlyMap<string, Compiled>, facts: GraphFacts): WorkflowRegistry {
  const commands = new Map<string, string>();
  const fingerprints = new Map<string, string>();
  for (const [key, def] of workflows) {
    const view = compiled.get(key)?.view;
    const name = def.show && view !== undefined ? resolvedCommand(key, view) : undefined;
    const holder = name === undefined ? undefined : commands.get(name);
    if (name !== undefined && (holder === undefined || byCodeUnit(key, holder) < 0)) commands.set(name, key);
    fingerprints.set(key, workflowFingerprint(def));
  }
  return sealRegistry({ workflows, commands, phaseCounts: facts.phaseCount, fingerprints });
}

/** Workflows that nest deeper than MAX_NESTING levels, each a problem of its own (start could never enter them). */
function nestingProblems(facts: GraphFacts): DefinitionProblem[] {
  const problems: DefinitionProblem[] = [];
  for (const [key, depth] of facts.depth) {
    if (depth <= MAX_NESTING) continue;
    const reason = `nests ${depth} levels of sub-workflows; at most ${MAX_NESTING} are allowed`;
    problems.push(problemAt("NESTING_TOO_DEEP", key, ["phases"], reason, "flatten the chain of sub-workflows"));
  }
  return problems;
}

/** A workflow left out without a problem of its own would be a silent drop: name it. */
function droppedProblems(raws: readonly RawWorkflow[], kept: ReadonlyMap<string, unknown>, problems: readonly DefinitionProblem[]): DefinitionProblem[] {
  const named = new Set(problems.filter(isBlocking).map((p) => p.workflowKey));
  const out: DefinitionProblem[] = [];
  for (const { key } of raws) {
    if (kept.has(key) || named.has(key)) continue;
    out.push(problemAt("INVALID_DEFINITION", key, [], "could not be compiled", "check the workflow against the definition reference in docs/core.md"));
  }
  return out;
}

function compile(set: RawSet, options: CompileOptions): CompileResult {
  const raws = set.workflows;
  const { compiled, problems } = compileEach(raws);
  for (const { reason } of set.rootProblems) problems.push({ code: "INVALID_DEFINITION", path: "(root)", message: `(root): ${reason}`, hint: "use workflow keys (strings) as the Map's keys" });
  problems.push(...duplicateCommandProblems(compiled));
  const graph: ReferenceGraph = new Map([...compiled.values()].map((c) => [c.key, c.refs]));
  const cycles = cycleProblems(graph, compiled);
  problems.push(...cycles.problems);
  const broken = new Set<string>(cycles.inCycle.keys());
  for (const p of problems) if (p.workflowKey !== undefined && isBlocking(p)) broken.add(p.workflowKey);
  const healthy = healthyKeys(graph, broken);
  problems.push(...brokenTargetProblems(compiled, healthy, cycles.inCycle));
  let workflows = buildRegistry(raws, compiled, healthy);
  let facts = graphFacts(workflows);
  const deep = nestingProblems(facts);
  if (deep.length > 0) {
    // Too deep is like broken: it and everything that references it go.
    problems.push(...deep);
    const healthier = healthyKeys(graph, new Set([...broken, ...deep.map((p) => p.workflowKey as string)]));
    workflows = buildRegistry(raws, compiled, healthier);
    facts = graphFacts(workflows);
  }
  problems.push(...droppedProblems(raws, workflows, problems));
  settingsHint(problems);
  // Stable sort by workflow: the list reads per workflow and is the same for any key order of the input.
  problems.sort((a, b) => byCodeUnit(a.workflowKey ?? "", b.workflowKey ?? ""));
  const blocking = problems.filter(isBlocking);
  if (blocking.length === 0 || options.keepHealthy === true) return { ok: true, registry: seal(workflows, compiled, facts), problems };
  return { ok: false, error: summary(blocking), problems };
}

/** A broken workflow keyed "workflows" is most likely a whole settings document passed by mistake: say how. */
function settingsHint(problems: DefinitionProblem[]): void {
  problems.forEach((p, i) => {
    if (p.workflowKey !== "workflows") return;
    problems[i] = { ...p, hint: `${p.hint} (if "workflows" is a settings document's field, compile that field instead: compileDefinitions(doc.workflows))` };
  });
}

function failure(message: string, hint: string): CompileResult {
  const problems: DefinitionProblem[] = [{ code: "INVALID_DEFINITION", path: "(root)", message, hint }];
  return { ok: false, error: summary(problems), problems };
}

/** The one summary of a problem list: the first problem's code and message, how many more, every problem. */
function summary(problems: readonly DefinitionProblem[], file?: string): Refusal<CompileCode> {
  const first = problems[0];
  const where = file === undefined ? "" : `${file}: `;
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem(s))` : "";
  return refusal("definitions", first?.code ?? "INVALID_DEFINITION", `${where}${first?.message ?? "no problems"}${more}`, {
    ...(file === undefined ? {} : { file }),
    path: first?.path,
    hint: first?.hint,
    problems: problems.map((p) => ({ ...p })),
  });
}

/**
 * Validates raw definitions, given as one shape: the workflows by key, `{ key: def }` or a `Map` (a settings
 * document is compiled as `compileDefinitions(doc.workflows)`). Each definition is read once into own, plain
 * data. Returns a sealed registry, or a refusal with every problem found. Never throws, never writes to `raw`.
 */
export function compileDefinitions(raw: unknown, options: CompileOptions = {}): CompileResult {
  const keep: unknown = typeof options === "object" && options !== null ? options.keepHealthy : options;
  if (keep !== undefined && typeof keep !== "boolean") {
    // A caller's mistake, not the definitions': no problem is listed against them.
    const error = refusal("definitions", "INVALID_OPTIONS", `options.keepHealthy must be true or false, got ${describeValue(keep)}.`, { field: "options.keepHealthy", hint: "Pass { keepHealthy: true } or no options." });
    return { ok: false, error, problems: [] };
  }
  try {
    const set = readWorkflows(raw);
    if (set === undefined) {
      const message = `(root): expected an object of workflow definitions by key, got ${describeValue(raw)}`;
      return failure(message, 'pass { "<key>": { … } } or a Map (for a settings document, its "workflows" field)');
    }
    return compile(set, options);
  } catch {
    // Only exotic inputs (proxies, throwing getters) get here; the contract is still a typed result.
    return failure("(root): the definitions could not be read as plain JSON", "pass plain JSON data");
  }
}

/** One WorkflowError summarising a failed compile, for callers that report a single error (e.g. a CLI). */
export function definitionProblemsError(problems: readonly DefinitionProblem[], file?: string): WorkflowError {
  return refusalToError(summary(problems, file));
}

