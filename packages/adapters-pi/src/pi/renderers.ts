/**
 * Renderers as plain `{ render(width), invalidate() }` objects: both hosts accept them, so no TUI package is
 * loaded at run time. Long lines are cut to the width pi gives.
 */
import type { PiApi, PiMessageRenderer, PiRenderedResult, PiTheme, PlainComponent } from "./host.js";
import { MESSAGE } from "./runtime.js";

/** A component showing fixed lines, cut to the render width. */
export function linesComponent(lines: readonly string[]): PlainComponent {
  return {
    render: (width: number) => lines.map((l) => (width > 0 && visibleLength(l) > width ? cut(l, width) : l)),
    invalidate() {},
  };
}

// ANSI colour codes take no columns; count what is shown.
const ANSI = /\u001b\[[0-9;]*m/g;
function visibleLength(s: string): number {
  return [...s.replace(ANSI, "")].length;
}
function cut(s: string, width: number): string {
  const plain = [...s.replace(ANSI, "")];
  return `${plain.slice(0, Math.max(0, width - 1)).join("")}…`;
}

/** `workflow_step next`, as the tool call line. */
export function stepCallComponent(args: { action?: unknown; summary?: unknown } | undefined, theme: PiTheme): PlainComponent {
  const action = typeof args?.action === "string" ? args.action : "?";
  return linesComponent([theme.fg("toolTitle", theme.bold("workflow_step ")) + theme.fg("accent", action)]);
}

/** The tool result: the transition line (previous → current) collapsed, the whole context expanded. */
export function stepResultComponent(result: PiRenderedResult, options: { expanded: boolean }, theme: PiTheme): PlainComponent {
  const t = result.content.find((c) => c.type === "text")?.text ?? "";
  const lines = t.split("\n");
  return linesComponent((options.expanded ? lines : lines.slice(0, 1)).map((l) => theme.fg("toolOutput", l)));
}

function messageRenderer(prefix: string, color: string, opts: { bold?: boolean; fixed?: string } = {}): PiMessageRenderer {
  return (message, _options, theme) => {
    const raw = opts.fixed ?? (typeof message.content === "string" ? message.content : "");
    const lines = raw.split("\n").map((l, i) => (i === 0 && prefix !== "" ? theme.fg("accent", prefix) : "") + theme.fg(color, opts.bold ? theme.bold(l) : l));
    return linesComponent(lines);
  };
}

/** Registers the renderers of the extension's message types. */
export function registerRenderers(pi: PiApi): void {
  pi.registerMessageRenderer(MESSAGE.context, messageRenderer("🔄 ", "dim", { fixed: "[Workflow context injected]" }));
  pi.registerMessageRenderer(MESSAGE.complete, messageRenderer("", "success", { bold: true }));
  pi.registerMessageRenderer(MESSAGE.countdown, messageRenderer("⏳ ", "dim"));
  pi.registerMessageRenderer(MESSAGE.notice, messageRenderer("", "warning"));
}
