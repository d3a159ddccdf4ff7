/**
 * A typed fake of pi's extension API (the `PiApi` shape the extension is written against): it keeps a session
 * branch, records UI calls and sent messages, and emits events the way the hosts do. `settledHost: true`
 * behaves like 1.5.x (`on` returns an unsubscribe function, `agent_settled` exists). The active tools (the set
 * declared to the model) follow pi 1.5.x's `getActiveTools` / `setActiveTools`: pi's built-in tools and every
 * registered tool start active; a set names tools to keep (in their order) and to add, unknown names ignored.
 */
import type { BranchEntry, PiApi, PiCommandDefinition, PiContext, PiEvents, PiHandler, PiMessageRenderer, PiToolDefinition, PiToolResult } from "../pi/index.js";

/** A message the extension sent. */
export interface SentMessage {
  customType: string;
  content: string;
  display: boolean;
  options?: { triggerTurn?: boolean; deliverAs?: string };
}

/** pi's tools active by default (`--tools` unset): what the fake's built-in tools are unless told otherwise. */
const PI_DEFAULT_TOOLS: readonly string[] = ["read", "bash", "edit", "write"];

/** The fake. */
export interface FakePi {
  readonly api: PiApi;
  readonly branch: BranchEntry[];
  readonly sent: SentMessage[];
  readonly userMessages: string[];
  readonly statuses: Array<string | undefined>;
  readonly widgets: Map<string, string[] | undefined>;
  readonly notices: Array<{ text: string; level?: string }>;
  readonly tools: Map<string, PiToolDefinition>;
  readonly commands: Map<string, PiCommandDefinition>;
  readonly renderers: Map<string, PiMessageRenderer>;
  /** The active tools now: what a prompt sent at this moment would declare to the model. */
  readonly activeTools: readonly string[];
  /** Every `setActiveTools` call, in order, with the names it was given. */
  readonly setActiveToolsCalls: string[][];
  sessionName: string | undefined;
  confirmAnswers: boolean[];
  /** Answers of `ui.select` (undefined: dismissed), and what it was asked. */
  selectAnswers: Array<string | undefined>;
  readonly selects: Array<{ title: string; options: string[] }>;
  hasUI: boolean;
  cwd: string;
  /** pi 1.5.x's `ctx.mode`; undefined like 0.73.1. */
  mode: string | undefined;
  ctx(): PiContext;
  /** Makes every ctx handed out so far throw on use, as pi does once a session is replaced or reloaded. */
  staleAll(): void;
  /** Uses of a stale ctx (each one a bug: pi would throw there). */
  readonly staleUses: string[];
  emit<E extends keyof PiEvents>(event: E, payload: Omit<PiEvents[E], "type">): Promise<unknown[]>;
  /** Calls `workflow_step`; a thrown refusal comes back as `{ error }`. */
  step(params: Record<string, unknown>): Promise<PiToolResult | { error: string }>;
  command(name: string, args?: string): Promise<void>;
}

/** Creates a fake; `branch` may hold entries of an earlier session. */
export function createFakePi(options: { settledHost?: boolean; hasUI?: boolean; cwd?: string; branch?: BranchEntry[]; builtinTools?: readonly string[] } = {}): FakePi {
  const handlers = new Map<string, Array<(e: unknown, ctx: PiContext) => unknown>>();
  let generation = 0;
  const builtins = [...(options.builtinTools ?? PI_DEFAULT_TOOLS)];
  let active: string[] = [...builtins];
  const known = (name: string): boolean => builtins.includes(name) || fake.tools.has(name);
  const fake: FakePi = {
    get activeTools() {
      return [...active];
    },
    setActiveToolsCalls: [],
    branch: options.branch ?? [],
    sent: [],
    userMessages: [],
    statuses: [],
    widgets: new Map(),
    notices: [],
    tools: new Map(),
    commands: new Map(),
    renderers: new Map(),
    sessionName: undefined,
    staleUses: [],
    staleAll: () => void (generation += 1),
    confirmAnswers: [],
    selectAnswers: [],
    selects: [],
    hasUI: options.hasUI ?? true,
    mode: undefined,
    cwd: options.cwd ?? process.cwd(),
    api: {
      on<E extends keyof PiEvents>(event: E, handler: PiHandler<E>) {
        const list = handlers.get(event) ?? [];
        list.push(handler as (e: unknown, ctx: PiContext) => unknown);
        handlers.set(event, list);
        return options.settledHost ? () => list.splice(list.indexOf(handler as never), 1) : undefined;
      },
      registerTool(t) {
        fake.tools.set(t.name, t);
        // A registered (direct) tool is active from its registration, as on pi 1.5.x.
        if (!active.includes(t.name)) active.push(t.name);
      },
      getActiveTools: () => [...active],
      setActiveTools(toolNames) {
        fake.setActiveToolsCalls.push([...toolNames]);
        // pi 1.5.x's loadout: the active tools still requested keep their order, the others requested follow;
        // names that are no tool are ignored.
        const requested = new Set(toolNames);
        active = [...new Set([...active.filter((n) => requested.has(n)), ...toolNames])].filter(known);
      },
      registerCommand: (name, c) => void fake.commands.set(name, c),
      registerMessageRenderer: (type, r) => void fake.renderers.set(type, r),
      sendMessage(message, opts) {
        fake.sent.push({ ...message, options: opts });
        fake.branch.push({ type: "custom_message", customType: message.customType, data: message.content });
      },
      sendUserMessage: (content) => void fake.userMessages.push(content),
      appendEntry: (customType, data) => void fake.branch.push({ type: "custom", customType, data: structuredClone(data) }),
      setSessionName: (name) => void (fake.sessionName = name),
      // 1.5.x exports it; the extension probes it to know agent_settled fires.
      ...(options.settledHost ? { registerEntryRenderer: () => undefined } : {}),
    },
    ctx() {
      const born = generation;
      const live = (what: string): void => {
        if (born !== generation) {
          fake.staleUses.push(what);
          throw new Error(`This extension ctx is stale after session replacement or reload (${what})`);
        }
      };
      return {
        hasUI: fake.hasUI,
        cwd: fake.cwd,
        ...(fake.mode === undefined ? {} : { mode: fake.mode }),
        sessionManager: { getBranch: () => (live("getBranch"), fake.branch) },
        ui: {
          setStatus: (key, text) => void (live("setStatus"), key === "workflow" && fake.statuses.push(text)),
          setWidget: (key, lines) => void (live("setWidget"), fake.widgets.set(key, lines)),
          notify: (text, level) => void (live("notify"), fake.notices.push({ text, level })),
          confirm: async () => (live("confirm"), fake.confirmAnswers.shift() ?? false),
          select: async (title, options) => (live("select"), fake.selects.push({ title, options }), fake.selectAnswers.shift()),
        },
      };
    },
    async emit(event, payload) {
      const out: unknown[] = [];
      for (const h of handlers.get(event) ?? []) out.push(await h({ type: event, ...payload }, fake.ctx()));
      return out;
    },
    async step(params) {
      const tool = fake.tools.get("workflow_step");
      if (!tool) throw new Error("workflow_step is not registered");
      try {
        return await tool.execute("call", params, undefined, undefined, fake.ctx());
      } catch (error) {
        return { error: (error as Error).message };
      }
    },
    async command(name, args = "") {
      const c = fake.commands.get(name);
      if (!c) throw new Error(`/${name} is not registered`);
      await c.handler(args, fake.ctx());
    },
  };
  return fake;
}

/** The text of a tool result (or the refusal). */
export function resultText(r: PiToolResult | { error: string }): string {
  return "error" in r ? r.error : r.content.map((c) => c.text).join("\n");
}
