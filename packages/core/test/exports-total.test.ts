/**
 * Issue 18: "every exported function refuses a wrong-typed argument with INVALID_OPTIONS and never throws", over
 * EVERY runtime export of the package as a consumer imports it. The table below classifies each function; a new
 * export that is not classified fails the first test, so the property can never silently skip one.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import * as core from "@phasekit/core";

/** What a function answers: an outcome, a boolean, a WorkflowError to throw, or (a class) an instance. */
type Kind = "outcome" | "predicate" | "error-builder" | "class";

/**
 * Every function export. `junk`: the refusal codes an outcome function may answer when every argument is junk.
 * Functions taking a registry first answer INVALID_REGISTRY (the registry is checked first); the parsers take
 * `unknown` input by design, so junk there is a bad document (INVALID_DEFINITION / INVALID_STATE), not a
 * wrong-typed argument; parseState's argument is text, so a non-string is INVALID_OPTIONS.
 */
const REGISTRY_FIRST = ["INVALID_REGISTRY"];
const FUNCTIONS: Record<string, { kind: Kind; junk?: readonly string[] }> = {
  compileDefinitions: { kind: "outcome", junk: ["INVALID_OPTIONS", "INVALID_DEFINITION"] },
  migrateState: { kind: "outcome", junk: ["INVALID_STATE", "UNSUPPORTED_VERSION"] },
  parseState: { kind: "outcome", junk: ["INVALID_OPTIONS", "INVALID_STATE", "UNSUPPORTED_VERSION"] },
  toPersisted: { kind: "outcome", junk: ["INVALID_OPTIONS"] },
  start: { kind: "outcome", junk: REGISTRY_FIRST },
  advance: { kind: "outcome", junk: REGISTRY_FIRST },
  loop: { kind: "outcome", junk: REGISTRY_FIRST },
  restartScope: { kind: "outcome", junk: REGISTRY_FIRST },
  route: { kind: "outcome", junk: REGISTRY_FIRST },
  carryPosition: { kind: "outcome", junk: REGISTRY_FIRST },
  cancel: { kind: "outcome", junk: REGISTRY_FIRST },
  cancelNow: { kind: "outcome", junk: REGISTRY_FIRST },
  pause: { kind: "outcome", junk: REGISTRY_FIRST },
  resume: { kind: "outcome", junk: REGISTRY_FIRST },
  fail: { kind: "outcome", junk: REGISTRY_FIRST },
  markCompletionNotified: { kind: "outcome", junk: REGISTRY_FIRST },
  reduce: { kind: "outcome", junk: REGISTRY_FIRST },
  resolveActive: { kind: "outcome", junk: REGISTRY_FIRST },
  checkTool: { kind: "outcome", junk: REGISTRY_FIRST },
  checkDefinitions: { kind: "outcome", junk: REGISTRY_FIRST },
  completionMessage: { kind: "outcome", junk: REGISTRY_FIRST },
  cancelledMessage: { kind: "outcome", junk: REGISTRY_FIRST },
  failedMessage: { kind: "outcome", junk: REGISTRY_FIRST },
  endOfRunMessage: { kind: "outcome", junk: REGISTRY_FIRST },
  initialMessage: { kind: "outcome", junk: REGISTRY_FIRST },
  statusLine: { kind: "outcome", junk: ["INVALID_OPTIONS"] },
  contextPrompt: { kind: "outcome", junk: ["INVALID_OPTIONS"] },
  notDoneReminder: { kind: "outcome", junk: ["INVALID_OPTIONS"] },
  stepResultLine: { kind: "outcome", junk: ["INVALID_OPTIONS"] },
  phaseLabel: { kind: "outcome", junk: ["INVALID_OPTIONS"] },
  renderTemplate: { kind: "outcome", junk: ["INVALID_OPTIONS"] },
  judgeControls: { kind: "outcome", junk: ["INVALID_OPTIONS"] },
  judgeBudget: { kind: "outcome", junk: ["INVALID_OPTIONS"] },
  judgeProgress: { kind: "outcome", junk: ["INVALID_OPTIONS"] },
  validateApproval: { kind: "outcome", junk: ["INVALID_OPTIONS", "INVALID_APPROVAL"] },
  describeSchemaIssue: { kind: "outcome", junk: ["INVALID_OPTIONS"] },
  isCompiledRegistry: { kind: "predicate" },
  isSubworkflowRef: { kind: "predicate" },
  isBlocking: { kind: "predicate" },
  isWorkflowError: { kind: "predicate" },
  isLive: { kind: "predicate" },
  isFinished: { kind: "predicate" },
  workflowError: { kind: "error-builder" },
  refusalToError: { kind: "error-builder" },
  definitionProblemsError: { kind: "error-builder" },
  WorkflowError: { kind: "class" },
};

/** The refusal codes in a function's declared return type. */
type CodeOf<F> = F extends (...args: never[]) => infer R ? (R extends { readonly ok: false; readonly error: { readonly code: infer C } } ? C : never) : never;
type Exact<U, L extends readonly unknown[]> = [Exclude<U, L[number]>, Exclude<L[number], U>] extends [never, never] ? L : never;
/** `list`, which must name exactly the members of `U` (a code missing or extra is a compile error). */
const codesOf =
  <U extends string>() =>
  <const L extends readonly string[]>(list: L & Exact<U, L>): readonly string[] =>
    list;
const COMMON = ["INVALID_OPTIONS", "INVALID_REGISTRY"] as const;
const PATH = ["INVALID_STATE", "MISSING_DEFINITION", "INVALID_PATH_INDEX", "NESTING_TOO_DEEP"] as const;
const DEFINITION = ["INVALID_DEFINITION", "DANGLING_REFERENCE", "DEFINITION_CYCLE", "DUPLICATE_PHASE_ID", "TOOL_LISTS_CONFLICT", "INVALID_COMMAND_NAME", "EMPTY_PHASES", "DUPLICATE_COMMAND_NAME", "UNKNOWN_PROFILE", "NESTING_TOO_DEEP", "UNKNOWN_TEMPLATE_VARIABLE", "UNKNOWN_PHASE"] as const;
/**
 * Each outcome function's declared refusal codes, checked against its type at compile time (Exact) and against
 * what it answers at run time (the properties below): a declared union is what the function can return.
 */
const CODES: Record<string, readonly string[]> = {
  compileDefinitions: codesOf<CodeOf<typeof core.compileDefinitions>>()([...DEFINITION, "INVALID_OPTIONS"]),
  migrateState: codesOf<CodeOf<typeof core.migrateState>>()(["INVALID_STATE", "UNSUPPORTED_VERSION"]),
  parseState: codesOf<CodeOf<typeof core.parseState>>()(["INVALID_STATE", "UNSUPPORTED_VERSION", "INVALID_OPTIONS"]),
  toPersisted: codesOf<CodeOf<typeof core.toPersisted>>()(["INVALID_OPTIONS"]),
  start: codesOf<CodeOf<typeof core.start>>()([...COMMON, "UNKNOWN_WORKFLOW", ...PATH]),
  advance: codesOf<CodeOf<typeof core.advance>>()([...COMMON, "NOT_RUNNING", ...PATH]),
  loop: codesOf<CodeOf<typeof core.loop>>()([...COMMON, "NOT_RUNNING", "NOT_LOOPABLE", "MAX_LOOPS_REACHED", ...PATH]),
  restartScope: codesOf<CodeOf<typeof core.restartScope>>()([...COMMON, "NOT_RUNNING", ...PATH]),
  route: codesOf<CodeOf<typeof core.route>>()([...COMMON, "NOT_RUNNING", "NO_ROUTE", "MAX_LOOPS_REACHED", ...PATH]),
  carryPosition: codesOf<CodeOf<typeof core.carryPosition>>()([...COMMON, "NOT_RUNNING", "DEFINITIONS_CHANGED", ...PATH]),
  cancel: codesOf<CodeOf<typeof core.cancel>>()([...COMMON, "NOT_RUNNING"]),
  cancelNow: codesOf<CodeOf<typeof core.cancelNow>>()([...COMMON, "NOT_RUNNING"]),
  pause: codesOf<CodeOf<typeof core.pause>>()([...COMMON, "NOT_RUNNING"]),
  resume: codesOf<CodeOf<typeof core.resume>>()([...COMMON, "NOT_PAUSED"]),
  fail: codesOf<CodeOf<typeof core.fail>>()([...COMMON, "NOT_RUNNING"]),
  markCompletionNotified: codesOf<CodeOf<typeof core.markCompletionNotified>>()([...COMMON, "NOT_FINISHED", "ALREADY_NOTIFIED"]),
  reduce: codesOf<CodeOf<typeof core.reduce>>()([...COMMON, "ALREADY_STARTED", "UNKNOWN_WORKFLOW", "NOT_RUNNING", "NOT_LOOPABLE", "MAX_LOOPS_REACHED", "NO_ROUTE", "NOT_PAUSED", "NOT_FINISHED", "ALREADY_NOTIFIED", ...PATH]),
  resolveActive: codesOf<CodeOf<typeof core.resolveActive>>()([...COMMON, ...PATH]),
  checkTool: codesOf<CodeOf<typeof core.checkTool>>()([...COMMON, ...PATH]),
  checkDefinitions: codesOf<CodeOf<typeof core.checkDefinitions>>()([...COMMON, "DEFINITIONS_CHANGED"]),
  completionMessage: codesOf<CodeOf<typeof core.completionMessage>>()([...COMMON, "MISSING_DEFINITION"]),
  cancelledMessage: codesOf<CodeOf<typeof core.cancelledMessage>>()([...COMMON, "MISSING_DEFINITION"]),
  failedMessage: codesOf<CodeOf<typeof core.failedMessage>>()([...COMMON, "MISSING_DEFINITION"]),
  endOfRunMessage: codesOf<CodeOf<typeof core.endOfRunMessage>>()([...COMMON, "MISSING_DEFINITION", "NOT_FINISHED"]),
  initialMessage: codesOf<CodeOf<typeof core.initialMessage>>()([...COMMON, "MISSING_DEFINITION"]),
  statusLine: codesOf<CodeOf<typeof core.statusLine>>()(["INVALID_OPTIONS"]),
  contextPrompt: codesOf<CodeOf<typeof core.contextPrompt>>()(["INVALID_OPTIONS"]),
  notDoneReminder: codesOf<CodeOf<typeof core.notDoneReminder>>()(["INVALID_OPTIONS"]),
  stepResultLine: codesOf<CodeOf<typeof core.stepResultLine>>()(["INVALID_OPTIONS"]),
  phaseLabel: codesOf<CodeOf<typeof core.phaseLabel>>()(["INVALID_OPTIONS"]),
  renderTemplate: codesOf<CodeOf<typeof core.renderTemplate>>()(["INVALID_OPTIONS"]),
  judgeControls: codesOf<CodeOf<typeof core.judgeControls>>()(["INVALID_OPTIONS"]),
  judgeBudget: codesOf<CodeOf<typeof core.judgeBudget>>()(["INVALID_OPTIONS"]),
  judgeProgress: codesOf<CodeOf<typeof core.judgeProgress>>()(["INVALID_OPTIONS"]),
  validateApproval: codesOf<CodeOf<typeof core.validateApproval>>()(["INVALID_OPTIONS", "INVALID_APPROVAL"]),
  describeSchemaIssue: codesOf<CodeOf<typeof core.describeSchemaIssue>>()(["INVALID_OPTIONS"]),
};

const exported = core as unknown as Record<string, unknown>;
const functionNames = Object.keys(exported).filter((k) => typeof exported[k] === "function").sort();

// ---- the adversary: values a JavaScript caller can pass ----

const boom = (): never => {
  throw new Error("boom");
};
/** A Proxy whose every trap throws (reads, `in`, keys, prototype, descriptors). */
const trapped = new Proxy({}, { get: boom, has: boom, ownKeys: boom, getPrototypeOf: boom, getOwnPropertyDescriptor: boom, set: boom, apply: boom });
/** A revoked Proxy: even `Array.isArray` throws on it. */
const revoked = ((): object => {
  const r = Proxy.revocable({}, {});
  r.revoke();
  return r.proxy;
})();
/** Throwing getters under the names core reads from its arguments. */
const FIELD_NAMES = ["status", "currentPath", "workflowKey", "schemaVersion", "type", "now", "code", "message", "details", "has", "name", "phases", "keepHealthy", "cause", "severity", "subworkflow", "state", "definition", "breadcrumb", "phaseName", "emoji", "length", "then", "toString", "valueOf"];
const getters = Object.defineProperties({}, Object.fromEntries(FIELD_NAMES.map((n) => [n, { get: boom, enumerable: true }])));
const cyclic: Record<string, unknown> = { status: "running", workflowKey: "flat" };
cyclic["self"] = cyclic;
cyclic["currentPath"] = [cyclic];
const unprintable = { toString: boom, valueOf: boom, [Symbol.toPrimitive]: boom };

/**
 * Exotic values are drawn as names and built inside the property: fast-check itself reads the values it
 * generates (to clone and print them), and a Proxy whose traps throw would throw in fast-check, not in core.
 */
const EXOTIC: Record<string, () => unknown> = {
  trapped: () => trapped,
  revoked: () => revoked,
  getters: () => getters,
  cyclic: () => cyclic,
  unprintable: () => unprintable,
  arrayOfTrapped: () => [trapped],
  nanClock: () => ({ now: Number.NaN }),
  trappedType: () => ({ type: trapped }),
  fakeRefusal: () => ({ code: 1, message: null, details: 7 }),
  symbol: () => Symbol("s"),
  fn: () => () => 1,
  map: () => new Map([[1, 2]]),
};
type Drawn = { exotic: string } | { plain: unknown };
const junkDrawn: fc.Arbitrary<Drawn> = fc.oneof(
  fc.constantFrom(...Object.keys(EXOTIC)).map((exotic) => ({ exotic })),
  fc.constantFrom<unknown>(null, undefined, 0, -1, Number.NaN, Infinity, "", "x", true, 10n, [], {}, new Date(0)).map((plain) => ({ plain })),
  fc.anything({ maxDepth: 2, withNullPrototype: true, withMap: true, withSet: true, withBigInt: true, withDate: true, withTypedArray: true, withSparseArray: true }).map((plain) => ({ plain })),
);
const build = (d: Drawn): unknown => ("exotic" in d ? (EXOTIC[d.exotic] as () => unknown)() : d.plain);

// ---- valid values, mixed in so the checks past the first argument are reached ----

const compiled = core.compileDefinitions({
  flat: { name: "Flat", phases: [{ id: "f1", name: "Flat One", emoji: "1️⃣", gates: { verify: { commands: ["true"] }, onFail: "f1" } }, { id: "f2", name: "Flat Two" }] },
  outer: { name: "Outer", phases: [{ subworkflow: "flat" }, { id: "o2", name: "Outer Two" }] },
});
if (!compiled.ok) throw new Error(compiled.error.message);
const registry = compiled.registry;
const startedRun = core.start(registry, { workflowKey: "outer", taskId: "t", taskDescription: "d" }, { now: 1 });
if (!startedRun.ok) throw new Error(startedRun.error.message);
const state = startedRun.state;
const resolved = core.resolveActive(registry, state);
if (!resolved.ok || resolved.active === null) throw new Error("fixture does not resolve");
const active = resolved.active;
const valid: readonly unknown[] = [
  registry,
  state,
  active,
  { now: 5 },
  { type: "advance" },
  startedRun.happened,
  active.nextPhase,
  "flat",
  core.PROMPT_VARS,
  { workflowName: "W" },
  { workflowKey: "flat", taskId: "t", taskDescription: "d" },
  { keepHealthy: true },
  [],
];
/** An argument: junk, a valid value (by index), or the state with one field replaced by junk. */
type Arg = Drawn | { valid: number } | { broken: string; with: Drawn };
const arg: fc.Arbitrary<Arg> = fc.oneof(
  { weight: 3, arbitrary: junkDrawn },
  { weight: 2, arbitrary: fc.nat({ max: valid.length - 1 }).map((i) => ({ valid: i })) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...Object.keys(state)), junkDrawn).map(([broken, w]) => ({ broken, with: w })) },
);
function buildArg(a: Arg): unknown {
  if ("valid" in a) return valid[a.valid];
  // The shape check must name the broken field, not trip on it.
  if ("broken" in a) return { ...state, [a.broken]: build(a.with) };
  return build(a);
}

/** A well-typed call of each outcome function (the property below breaks one argument of it at a time). */
const persistedState = core.toPersisted(state);
if (!persistedState.ok) throw new Error(persistedState.error.message);
const BASE: Record<string, readonly unknown[]> = {
  compileDefinitions: [{ w: { name: "W", phases: [{ id: "a", name: "A" }] } }, { keepHealthy: true }],
  migrateState: [persistedState.state],
  parseState: [JSON.stringify(persistedState.state)],
  toPersisted: [state],
  start: [registry, { workflowKey: "outer", taskId: "t", taskDescription: "d" }, { now: 5 }],
  fail: [registry, state, "why", { now: 5 }],
  reduce: [registry, state, { type: "advance" }, { now: 5 }],
  resolveActive: [registry, state],
  checkTool: [registry, state, "read"],
  checkDefinitions: [registry, state],
  statusLine: [active],
  contextPrompt: [active],
  notDoneReminder: [active],
  stepResultLine: [startedRun.happened, "Before", active.nextPhase, null, "W"],
  phaseLabel: ["🔍", "Review"],
  renderTemplate: ["{workflowName}", { workflowName: "W" }, core.PROMPT_VARS],
  judgeControls: [active, { workflowUsed: core.NO_USAGE, phaseUsed: core.NO_USAGE }],
  judgeBudget: [{ turns: 3, onExhausted: "pause" }, core.NO_USAGE, "run r"],
  judgeProgress: [{ sameStepFailures: 2 }, { sameStepFailures: { stepId: "s", count: 1 } }],
  validateApproval: [{ type: "object", properties: { channel: { type: "string" } } }, { channel: "beta" }],
  describeSchemaIssue: [core.BudgetsSchema.safeParse({ turns: -1 }).error, { turns: -1 }, "budgets"],
};
const paused = core.pause(registry, state, { now: 2 });
const finished = core.cancelNow(registry, state, { now: 2 });
if (!paused.ok || !finished.ok) throw new Error("fixture moves refused");
for (const n of ["advance", "loop", "restartScope", "cancel", "cancelNow", "pause"]) BASE[n] = [registry, state, { now: 5 }];
BASE["carryPosition"] = [registry, state, registry, { now: 5 }];
BASE["route"] = [registry, state, "fail", { now: 5 }];
BASE["resume"] = [registry, paused.state, { now: 5 }];
BASE["markCompletionNotified"] = [registry, finished.state, { now: 5 }];
for (const n of ["completionMessage", "cancelledMessage", "failedMessage", "initialMessage"]) BASE[n] = [registry, state];
BASE["endOfRunMessage"] = [registry, finished.state];

function call(name: string, args: readonly unknown[]): unknown {
  const fn = exported[name] as (...a: unknown[]) => unknown;
  if (FUNCTIONS[name]?.kind === "class") return new (fn as unknown as new (...a: unknown[]) => unknown)(...args);
  return fn(...args);
}

/** Whether an error builder's first argument has the wrong type (an empty problem list is a right one). */
function wrongFirst(name: string, first: unknown): boolean {
  if (name === "workflowError") return typeof first !== "string";
  if (name === "definitionProblemsError") return first === trapped || first === revoked || !Array.isArray(first);
  return true;
}

/** The answer of `name` for `args` meets its kind's contract; `allJunk` when no argument is a valid value. */
function checkAnswer(name: string, args: readonly unknown[], allJunk: boolean): void {
  const { kind, junk: junkCodes } = FUNCTIONS[name] as { kind: Kind; junk?: readonly string[] };
  let answer: unknown;
  expect(() => (answer = call(name, args)), name).not.toThrow();
  if (kind === "predicate") {
    expect(typeof answer, name).toBe("boolean");
    // Junk is never a compiled registry; the other predicates answer what their one field says.
    if (allJunk && name === "isCompiledRegistry") expect(answer, name).toBe(false);
    return;
  }
  if (kind === "class" || kind === "error-builder") {
    expect(answer, name).toBeInstanceOf(core.WorkflowError);
    expect(typeof (answer as Error).message, name).toBe("string");
    if (kind === "error-builder" && allJunk && wrongFirst(name, args[0])) expect((answer as core.WorkflowError).code, name).toBe("INVALID_OPTIONS");
    return;
  }
  const o = answer as { ok?: unknown; error?: { name?: unknown; code?: unknown; message?: unknown } };
  expect(typeof o.ok, name).toBe("boolean");
  if (o.ok === true) return;
  // A refusal is plain data with a code and a message, whatever the input was.
  expect([name, o.error?.name, typeof o.error?.code, typeof o.error?.message]).toEqual([name, "WorkflowError", "string", "string"]);
  expect(() => JSON.stringify(o.error), name).not.toThrow();
  expect(CODES[name], `${name} answered a code outside its declared union: ${String(o.error?.message)}`).toContain(o.error?.code);
  if (allJunk) expect(junkCodes, `${name}: ${String(o.error?.message)}`).toContain(o.error?.code);
}

describe("every runtime export of @phasekit/core is total", () => {
  it("the table classifies exactly the package's function exports, and every outcome function declares its codes", () => {
    expect(Object.keys(FUNCTIONS).sort()).toEqual(functionNames);
    expect(Object.keys(CODES).sort()).toEqual(functionNames.filter((n) => FUNCTIONS[n]?.kind === "outcome"));
  });

  it("constants read without throwing, and the allowlists cannot be written", () => {
    for (const [name, value] of Object.entries(exported)) {
      if (typeof value === "function") continue;
      expect(() => JSON.stringify(value instanceof Set ? [...value] : (value as object)), name).not.toThrow();
    }
  });

  it("property: junk arguments (null, numbers, Proxies, throwing getters, cycles, revoked Proxies) never throw; an outcome refuses with INVALID_OPTIONS / INVALID_REGISTRY", () => {
    const runs = process.env.CI === "true" ? 300 : 100;
    fc.assert(
      fc.property(fc.array(junkDrawn, { minLength: 0, maxLength: 5 }), (drawn) => {
        const args = drawn.map(build);
        for (const name of functionNames) checkAnswer(name, args, true);
      }),
      { numRuns: runs },
    );
  });

  it("property: junk mixed with valid registries, states, actives and events never throws; every refusal is plain data", () => {
    const runs = process.env.CI === "true" ? 300 : 100;
    fc.assert(
      fc.property(fc.array(arg, { minLength: 0, maxLength: 5 }), (drawn) => {
        const args = drawn.map(buildArg);
        for (const name of functionNames) checkAnswer(name, args, false);
      }),
      { numRuns: runs },
    );
  });

  it("property: a well-typed call with one argument replaced by junk (or one state field broken) never throws and answers a declared code", () => {
    const names = Object.keys(BASE).sort();
    expect(names).toEqual(Object.keys(CODES).sort());
    const runs = process.env.CI === "true" ? 600 : 200;
    const broken = fc.record({ name: fc.constantFrom(...names), at: fc.nat(), junk: junkDrawn, field: fc.option(fc.constantFrom(...Object.keys(state)), { nil: undefined }) });
    fc.assert(
      fc.property(broken, ({ name, at, junk: drawn, field }) => {
        const args = [...(BASE[name] as readonly unknown[])];
        const i = at % Math.max(args.length, 1);
        const bad = build(drawn);
        // A broken state field where the state goes; otherwise the whole argument is junk.
        const at_ = args[i];
        args[i] = field !== undefined && (at_ === state || at_ === paused.state || at_ === finished.state) ? { ...(at_ as object), [field]: bad } : bad;
        checkAnswer(name, args, false);
        if (args[0] === bad && args.length > 1 && (BASE[name] as readonly unknown[])[0] === registry) {
          const r = call(name, args) as { ok: boolean; error?: { code: string } };
          expect([name, r.error?.code]).toEqual([name, "INVALID_REGISTRY"]);
        }
      }),
      { numRuns: runs },
    );
  });

  it("the well-typed calls answer ok (the property above starts from working calls)", () => {
    for (const [name, args] of Object.entries(BASE)) {
      const r = call(name, args) as { ok: boolean; error?: { message: string } };
      expect([name, r.ok, r.error?.message]).toEqual([name, true, undefined]);
    }
  });

  it("why: the texts and toPersisted refuse null with INVALID_OPTIONS naming the argument (they threw a TypeError)", () => {
    const named = (r: { ok: boolean; error?: { code: string; details: { field?: unknown } } }): unknown => [r.ok, r.error?.code, r.error?.details.field];
    const nul = null as never;
    expect(named(core.statusLine(nul))).toEqual([false, "INVALID_OPTIONS", "active"]);
    expect(named(core.contextPrompt(nul))).toEqual([false, "INVALID_OPTIONS", "active"]);
    expect(named(core.notDoneReminder(nul))).toEqual([false, "INVALID_OPTIONS", "active"]);
    expect(named(core.toPersisted(nul))).toEqual([false, "INVALID_OPTIONS", "state"]);
    expect(named(core.renderTemplate(nul, {}, core.PROMPT_VARS))).toEqual([false, "INVALID_OPTIONS", "template"]);
    expect(named(core.stepResultLine(startedRun.happened, "A", nul, null, 5 as never))).toEqual([false, "INVALID_OPTIONS", "workflowName"]);
    expect(named(core.parseState({} as never))).toEqual([false, "INVALID_OPTIONS", "json"]);
    // An ActiveWorkflow copied by hand is not one resolveActive made: refused, not read.
    expect(named(core.statusLine({ ...active }))).toEqual([false, "INVALID_OPTIONS", "active"]);
  });

  it("why: a refusal stays plain data when the offending value is a bigint (details.value made JSON.stringify throw)", () => {
    const r = core.advance(registry, { ...state, loopCount: 10n as never }, { now: 5 });
    expect(!r.ok && [r.error.code, r.error.details.field]).toEqual(["INVALID_OPTIONS", "state.loopCount"]);
    expect(() => JSON.stringify(r)).not.toThrow();
    expect(() => structuredClone(core.checkTool(registry, state, Symbol("t") as never))).not.toThrow();
  });

  it("the total forms give the same text and state as before for what core made", () => {
    expect(core.statusLine(active)).toEqual({ ok: true, text: "Outer > Flat [1/2] > 1️⃣ Flat One [1/2]" });
    expect(core.renderTemplate("{workflowName} {taskId}", { workflowName: "W", taskId: "t" }, core.BLOCK_REASON_VARS)).toEqual({ ok: true, text: "W {taskId}" });
    const persisted = core.toPersisted({ ...state, cancelPending: true });
    expect(persisted.ok && persisted.state.cancelPending).toBe(false);
    expect(core.phaseLabel("", "Build")).toEqual({ ok: true, text: "Build" });
    expect(core.refusalToError(null as never).code).toBe("INVALID_OPTIONS");
    expect(core.definitionProblemsError("nope" as never).code).toBe("INVALID_OPTIONS");
  });
});

describe("each function's refusal code union is what it can return", () => {
  it("compileDefinitions' codes are the definition codes and INVALID_OPTIONS, not every code phasekit has", () => {
    const r = core.compileDefinitions({ a: { name: "A", phases: [] } });
    const codes: string[] = [];
    if (!r.ok) {
      switch (r.error.code) {
        // @ts-expect-error LOCK_LOST is an adapter's code: compileDefinitions cannot return it
        case "LOCK_LOST":
          break;
        default:
          codes.push(r.error.code);
      }
    }
    expect(codes).toEqual(["EMPTY_PHASES"]);
  });
  it("start's codes are not reduce's: ALREADY_STARTED is only a start event on a state", () => {
    const r = core.start(registry, { workflowKey: "nope", taskId: "t", taskDescription: "" }, { now: 1 });
    if (!r.ok) {
      // @ts-expect-error start() itself never answers ALREADY_STARTED (reduce does, for a start event on a run)
      expect(r.error.code === "ALREADY_STARTED").toBe(false);
    }
    const again = core.reduce(registry, state, { type: "start", workflowKey: "flat", taskId: "t", taskDescription: "" }, { now: 2 });
    expect(!again.ok && again.error.code).toBe("ALREADY_STARTED");
  });
});
