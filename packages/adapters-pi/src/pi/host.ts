/**
 * The part of pi's extension API this extension uses, written structurally so that the built file imports
 * nothing from a host at run time and one file fits both `@mariozechner/pi-coding-agent` 0.73.1 and
 * `@earendil-works/pi-coding-agent` 1.5.x (a type test checks the real 0.73.1 API against these shapes).
 * Members only the newer host has are optional.
 */

/** One entry of the session branch (root → leaf); custom entries carry `customType` and `data`. */
export interface BranchEntry {
  readonly type: string;
  readonly id?: string;
  readonly customType?: string;
  readonly data?: unknown;
}

/** The UI surface: status bar, widgets, dialogs. In print mode these are no-ops. */
export interface PiUi {
  setStatus(key: string, text: string | undefined): void;
  setWidget(key: string, content: string[] | undefined, options?: { placement?: "aboveEditor" | "belowEditor" }): void;
  notify(message: string, type?: "info" | "warning" | "error"): void;
  confirm(title: string, message: string): Promise<boolean>;
  /** Both hosts: a list dialog; undefined when dismissed. */
  select?(title: string, options: string[]): Promise<string | undefined>;
  /** Both hosts: a one-line text dialog; undefined when dismissed. */
  input?(title: string, placeholder?: string): Promise<string | undefined>;
}

/** What every handler receives. `mode` exists on 1.5.x only. */
export interface PiContext {
  readonly ui: PiUi;
  readonly hasUI: boolean;
  readonly cwd: string;
  readonly sessionManager: { getBranch(): readonly BranchEntry[] };
  readonly mode?: string;
}

/** A command handler's context (pi gives commands more; this extension needs no more than a handler's). */
export type PiCommandContext = PiContext;

/** A tool result as pi expects it from `execute`. */
export interface PiToolResult {
  content: Array<{ type: "text"; text: string }>;
  details: Record<string, unknown>;
}

/** A tool result as a renderer receives it (hosts also carry images). */
export interface PiRenderedResult {
  content: ReadonlyArray<{ type: string; text?: string }>;
}

/** A plain renderable: both hosts accept any object with `render(width)` and `invalidate()`. */
export interface PlainComponent {
  render(width: number): string[];
  invalidate(): void;
}

/** The theme, as far as the renderers use it. */
export interface PiTheme {
  fg(color: string, text: string): string;
  bold(text: string): string;
}

/** A tool definition with a plain JSON Schema for its parameters (both hosts validate it). */
export interface PiToolDefinition {
  name: string;
  label: string;
  description: string;
  promptSnippet?: string;
  promptGuidelines?: string[];
  parameters: Record<string, unknown>;
  // `any` for params: pi passes what the schema validated; each tool narrows it itself.
  execute(toolCallId: string, params: any, signal: AbortSignal | undefined, onUpdate: unknown, ctx: PiContext): Promise<PiToolResult>; // eslint-disable-line @typescript-eslint/no-explicit-any
  renderCall?(args: any, theme: PiTheme, context?: unknown): PlainComponent; // eslint-disable-line @typescript-eslint/no-explicit-any
  renderResult?(result: PiRenderedResult, options: { expanded: boolean; isPartial: boolean }, theme: PiTheme, context?: unknown): PlainComponent;
}

/** A slash command. */
export interface PiCommandDefinition {
  description?: string;
  getArgumentCompletions?(prefix: string): Array<{ value: string; label: string }> | null;
  handler(args: string, ctx: PiCommandContext): Promise<void>;
}

/** A message this extension sends (custom messages; `display: false` keeps them out of the transcript view). */
export interface PiCustomMessage {
  customType: string;
  content: string;
  display: boolean;
  details?: unknown;
}

/** A renderer for a custom message type. */
export type PiMessageRenderer = (message: { content: unknown; details?: unknown }, options: { expanded: boolean }, theme: PiTheme) => PlainComponent | undefined;

/** Events this extension listens to, with the fields it reads. */
export interface PiEvents {
  session_start: { type: "session_start"; reason?: string };
  session_tree: { type: "session_tree" };
  session_shutdown: { type: "session_shutdown" };
  /** 1.5.x adds `entries` (a boundary: returned entries reach the next model request of the same run). */
  turn_end: { type: "turn_end"; entries?: unknown[] };
  tool_call: { type: "tool_call"; toolName: string; toolCallId?: string; input?: unknown };
  before_agent_start: { type: "before_agent_start"; prompt?: string };
  agent_end: { type: "agent_end"; messages: readonly unknown[] };
  agent_settled: { type: "agent_settled"; aborted: boolean };
  input: { type: "input"; text: string; source?: string };
}

/** What a handler may return, per event. */
export interface PiEventResults {
  tool_call: { block: true; reason: string } | undefined;
  before_agent_start: { message: PiCustomMessage } | undefined;
  input: undefined;
  turn_end: { entries: PiCustomMessageDraft[] } | undefined;
}

/** A custom message appended at a 1.5.x turn boundary. */
export interface PiCustomMessageDraft extends PiCustomMessage {
  type: "custom_message";
}

/** A handler: pi awaits a returned promise. */
export type PiHandler<E extends keyof PiEvents> = (
  event: PiEvents[E],
  ctx: PiContext,
) => (E extends keyof PiEventResults ? PiEventResults[E] : void) | Promise<E extends keyof PiEventResults ? PiEventResults[E] : void>;

/** The extension API object pi hands to an extension factory. */
export interface PiApi {
  on<E extends keyof PiEvents>(event: E, handler: PiHandler<E>): unknown;
  registerTool(tool: PiToolDefinition): void;
  registerCommand(name: string, options: PiCommandDefinition): void;
  registerMessageRenderer(customType: string, renderer: PiMessageRenderer): void;
  sendMessage(message: PiCustomMessage, options?: { triggerTurn?: boolean; deliverAs?: "steer" | "followUp" | "nextTurn" }): void;
  sendUserMessage(content: string, options?: { deliverAs?: "steer" | "followUp" }): void;
  appendEntry(customType: string, data?: unknown): void;
  setSessionName(name: string): void;
  /** Both hosts: the tools declared to the model. */
  getActiveTools?(): string[];
  setActiveTools?(toolNames: string[]): void;
  /** 1.5.x only (a custom-entry renderer): its presence is how the extension knows it runs on 1.5.x. */
  registerEntryRenderer?(customType: string, renderer: unknown): void;
}

/** An extension factory as pi calls it. */
export type PiExtension = (pi: PiApi) => void;
