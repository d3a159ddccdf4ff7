/**
 * The template table: every variable pi-workflows 1.0.0 documents, in every text it documents it for, rendered by
 * pi-workflows' own code (the installed package: its command handler, buildContextPrompt, handleToolCall and
 * handleAgentEnd, driven through a fake host) and by phasekit, on the same definitions and the same position.
 * Each row: pi's rendering = phasekit's rendering. The few places where phasekit deliberately says something else
 * (because pi's text is false there) are rows of their own below, with both values.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { compileDefinitions } from "../src/definitions/compile.js";
import type { WorkflowRegistry } from "../src/definitions/registry.js";
import { contextPrompt } from "../src/present/context-prompt.js";
import { cancelledMessage, completionMessage, initialMessage, notDoneReminder } from "../src/present/messages.js";
import { checkTool } from "../src/policy/check-tool.js";
import type { WorkflowState } from "../src/state/schema.js";
import { reduce } from "../src/transitions/reduce.js";
import { resolveActive, type ActiveWorkflow } from "../src/transitions/resolve-active.js";

// pi-workflows' loader imports one value from its host (a front-matter parser no test here reaches).
vi.mock("@earendil-works/pi-coding-agent", () => ({ parseFrontmatter: () => ({ frontmatter: {}, body: "" }) }));

type Defs = Record<string, PiDef>;
interface PiPhase { id: string; name: string; emoji: string; instructions: string; tools?: { whitelist?: string[]; blacklist?: string[] }; availableProfiles?: string[] }
interface PiDef { name: string; commandName: string; initialMessage: string; phases: PiPhase[]; [field: string]: unknown }
interface PiState { workflowKey: string; active: boolean; cancelled: boolean; completionNotified: boolean; taskId: string; taskDescription: string; globalStepCount: number; currentPath: Array<{ workflowKey: string; phaseIndex: number }> }
type Sent = { content: string };
interface FakePi {
  sent: Sent[];
  userMessages: string[];
  handlers: Map<string, (args: string, ctx: unknown) => Promise<void>>;
}

const PI = "../../../node_modules/@harms-haus/pi-workflows/src/";
const piCommand = (await import(`${PI}command.ts`)) as { registerWorkflowCommand(pi: unknown, get: () => PiState | null, reload: () => Promise<Defs>, set: (s: PiState | null) => void): void };
const piHooks = (await import(`${PI}hooks.ts`)) as {
  handleToolCall(e: { toolName: string }, s: PiState, d: Defs): { reason: string } | undefined;
  handleAgentEnd(pi: unknown, s: PiState, d: Defs, ctx: unknown, e: { messages: unknown[] }): unknown;
};
const piPrompts = (await import(`${PI}prompts.ts`)) as { buildContextPrompt(active: unknown): string };
const piState = (await import(`${PI}state.ts`)) as { resolveActive(s: PiState, d: Defs): unknown; advancePhase(s: PiState, d: Defs): { newState: PiState } };

const TASK = "Add login page";
const TASK_ID = "wf-1";

function fakePi(): FakePi & Record<string, unknown> {
  const f: FakePi & Record<string, unknown> = {
    sent: [],
    userMessages: [],
    handlers: new Map(),
    registerCommand(name: string, o: { handler: (args: string, ctx: unknown) => Promise<void> }) {
      f.handlers.set(name, o.handler);
    },
    sendMessage(m: Sent) {
      f.sent.push(m);
    },
    sendUserMessage(text: string) {
      f.userMessages.push(text);
    },
    setSessionName() {},
    appendEntry() {},
  };
  return f;
}
const ctx = { cwd: "/nowhere", hasUI: false, ui: { notify() {}, setStatus() {}, setWidget() {}, confirm: async () => true } };

const phase = (id: string, extra: Partial<PiPhase> = {}): PiPhase => ({ id, name: `${id.toUpperCase()} Phase`, emoji: `e-${id}`, instructions: `Do ${id}.`, ...extra });

/** One flat workflow "w" with three phases; `texts` sets its template fields, `first` overrides phase a. */
function definitions(texts: Record<string, string>, phases: PiPhase[] = [phase("a", { availableProfiles: ["planner", "scout"] }), phase("b", { tools: { blacklist: ["edit", "write"] } }), phase("c", { tools: { whitelist: ["read"] } })]): Defs {
  return { w: { name: "Code Review", commandName: "review", initialMessage: "go", ...texts, phases } };
}

function phasekitRegistry(defs: Defs): WorkflowRegistry {
  const raw = Object.fromEntries(Object.entries(defs).map(([k, d]) => [k, { ...d, cancelledMessage: d["completionMessage"] }]));
  const r = compileDefinitions(raw);
  if (!r.ok) throw new Error(r.error.message);
  return r.registry;
}

/** Both sides at phase `index` (advanced `index` times from the start). */
function at(defs: Defs, index: number): { pi: PiState; pk: WorkflowState; registry: WorkflowRegistry } {
  const registry = phasekitRegistry(defs);
  const started = reduce(registry, null, { type: "start", workflowKey: "w", taskId: TASK_ID, taskDescription: TASK }, { now: 1 });
  if (!started.ok) throw new Error(started.error.message);
  let pk = started.state;
  let pi: PiState = { workflowKey: "w", active: true, cancelled: false, completionNotified: false, taskId: TASK_ID, taskDescription: TASK, globalStepCount: 0, currentPath: [{ workflowKey: "w", phaseIndex: 0 }] };
  for (let i = 0; i < index; i++) {
    pi = piState.advancePhase(pi, defs).newState;
    const r = reduce(registry, pk, { type: "advance" }, { now: 2 + i });
    if (!r.ok) throw new Error(r.error.message);
    pk = r.state;
  }
  return { pi, pk, registry };
}

function active(registry: WorkflowRegistry, state: WorkflowState): ActiveWorkflow {
  const r = resolveActive(registry, state);
  if (!r.ok || r.active === null) throw new Error("no active phase");
  return r.active;
}

const marked = (text: string): string => {
  const m = /«([\s\S]*?)»/.exec(text);
  if (m === null) throw new Error(`no marker in: ${text}`);
  return m[1] as string;
};

/** `{v}` rendered in `field` by both, at phase `index`: [pi, phasekit]. */
async function render(field: string, v: string, index: number): Promise<[string, string]> {
  const template = `«{${v}}»`;
  if (field === "initialMessage") {
    const defs = definitions({ initialMessage: template });
    const fake = fakePi();
    piCommand.registerWorkflowCommand(fake, () => null, async () => defs, () => {});
    await fake.handlers.get("workflow")?.(`review ${TASK}`, ctx);
    const { registry, pk } = at(defs, 0);
    const r = initialMessage(registry, pk);
    return [marked(fake.userMessages[0] ?? ""), marked(r.ok ? (r.text ?? "") : r.error.message)];
  }
  if (field === "instructions" || field === "roleInstruction" || field === "advanceReminder") {
    const base = definitions(field === "instructions" ? {} : { [field]: template });
    const w = base["w"] as PiDef;
    const defs: Defs = field === "instructions" ? { w: { ...w, phases: w.phases.map((p, i) => (i === index ? { ...p, instructions: template } : p)) } } : base;
    const { pi, pk, registry } = at(defs, index);
    return [marked(piPrompts.buildContextPrompt(piState.resolveActive(pi, defs))), marked(contextPrompt(active(registry, pk)))];
  }
  if (field === "blockReasonTemplate") {
    const defs = definitions({ blockReasonTemplate: template });
    const { pi, pk, registry } = at(defs, index);
    const d = checkTool(registry, pk, "bash");
    const pkReason = d.ok && !d.allowed ? d.reason : "(allowed)";
    const tool = index === 1 ? "edit" : "bash";
    const d2 = checkTool(registry, pk, tool);
    return [marked(piHooks.handleToolCall({ toolName: tool }, pi, defs)?.reason ?? "(allowed)"), marked(d2.ok && !d2.allowed ? d2.reason : pkReason)];
  }
  if (field === "completionMessage" || field === "cancelled") {
    const defs = definitions({ completionMessage: template });
    const { pi, pk, registry } = at(defs, 2);
    const fake = fakePi();
    const cancelled = field === "cancelled";
    piHooks.handleAgentEnd(fake, { ...pi, active: false, cancelled }, defs, ctx, { messages: [] });
    const end = reduce(registry, pk, cancelled ? { type: "cancel-now" } : { type: "advance" }, { now: 50 });
    if (!end.ok) throw new Error(end.error.message);
    const r = cancelled ? cancelledMessage(registry, end.state) : completionMessage(registry, end.state);
    return [marked(fake.sent[0]?.content ?? ""), marked(r.ok ? r.text : r.error.message)];
  }
  // notDoneReminder: pi sends it after its 3 s countdown (no UI), from a timer.
  const defs = definitions({ notDoneReminder: template });
  const { pi, pk, registry } = at(defs, index);
  const fake = fakePi();
  piHooks.handleAgentEnd(fake, pi, defs, ctx, { messages: [{ role: "assistant", stopReason: "stop" }] });
  vi.advanceTimersByTime(3_000);
  return [marked(fake.userMessages[0] ?? ""), marked(notDoneReminder(active(registry, pk)))];
}

/** pi-workflows' documented variables per text (docs/template-variables.md), each at the positions that matter. */
const TABLE: ReadonlyArray<readonly [string, string, number]> = [
  ...["workflowName", "workflowKey", "description", "firstPhaseId", "firstPhaseName", "firstPhaseEmoji", "firstPhaseProfiles"].map((v) => ["initialMessage", v, 0] as const),
  ...["instructions", "roleInstruction", "advanceReminder"].flatMap((field) =>
    ["workflowName", "workflowKey", "description", "taskId", "phaseId", "phaseName", "previousPhaseName", "nextPhaseName", "blockedToolsList", "toolName", "breadcrumbPath", "globalStepCount"].flatMap((v) =>
      [0, 1].map((i) => [field, v, i] as const),
    ),
  ),
  ...["instructions", "advanceReminder"].flatMap((field) => ["nextPhaseName", "previousPhaseName"].map((v) => [field, v, 2] as const)),
  ...["workflowName", "phaseName", "toolName", "allowedTools"].map((v) => ["blockReasonTemplate", v, 1] as const),
  ...["workflowName", "taskDescription", "taskId", "phaseCount"].flatMap((v) => [["completionMessage", v, 2] as const, ["cancelled", v, 2] as const]),
  ...["workflowName", "phaseName", "phaseEmoji", "phaseInstructions", "taskDescription", "taskId", "workflowKey"].map((v) => ["notDoneReminder", v, 1] as const),
];

describe("template table: pi-workflows' rendering = phasekit's rendering", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each(TABLE)("%s: {%s} at phase %i", async (field, v, index) => {
    const [pi, pk] = await render(field, v, index);
    expect(pk).toBe(pi);
    expect(pk).not.toBe(`{${v}}`); // every documented variable has a value
  });

  it("the deliberate differences, where pi-workflows' text is false", async () => {
    // A whitelist blocks every other tool: pi says "(none)" is blocked.
    expect(await render("instructions", "blockedToolsList", 2)).toEqual(["(none)", "all except: workflow_step, read"]);
    // Inside a sub-workflow: pi names the neighbours from the innermost list only, so at the last phase of a
    // sub-workflow its {nextPhaseName} is "DONE" though the parent goes on (and {previousPhaseName} reads the
    // root's list). phasekit names the phases advance and the path really reach.
    const sub: PiDef = { name: "Sub", commandName: "", initialMessage: "", show: "workflows", phases: [phase("x"), phase("y", { instructions: "«{previousPhaseName}|{nextPhaseName}»" })] };
    const defs: Defs = { w: { name: "W", commandName: "w", initialMessage: "go", phases: [phase("a"), { subworkflow: true, workflowKey: "s", resolved: sub } as unknown as PiPhase, phase("c")] }, s: sub };
    const registry = phasekitRegistry({ w: { ...defs.w, phases: [phase("a"), { subworkflow: "s" } as unknown as PiPhase, phase("c")] } as PiDef, s: { ...sub, show: false } as unknown as PiDef });
    let pk = (reduce(registry, null, { type: "start", workflowKey: "w", taskId: TASK_ID, taskDescription: TASK }, { now: 1 }) as { state: WorkflowState }).state;
    let pi: PiState = { workflowKey: "w", active: true, cancelled: false, completionNotified: false, taskId: TASK_ID, taskDescription: TASK, globalStepCount: 0, currentPath: [{ workflowKey: "w", phaseIndex: 0 }] };
    for (let i = 0; i < 2; i++) {
      pi = piState.advancePhase(pi, defs).newState;
      pk = (reduce(registry, pk, { type: "advance" }, { now: 2 + i }) as { state: WorkflowState }).state;
    }
    expect([marked(piPrompts.buildContextPrompt(piState.resolveActive(pi, defs))), marked(contextPrompt(active(registry, pk)))]).toEqual(["A Phase|DONE", "X Phase|C Phase"]);
  });
});
