/**
 * A `runWorkflow` reporter for code running inside pi (another extension's command or tool): progress goes to
 * a widget above the editor and errors to a notification, through the host's UI, never to raw stderr, which
 * would draw over pi's interactive screen. Without a UI (print mode) lines go to stderr as pi's own do.
 * A captured ctx may go stale once the session is replaced: then the reporter falls silent instead of throwing.
 */
import { createReporter, type Reporter, type ReporterLevel, type ReporterOptions } from "../run/reporter.js";
import type { PiContext } from "./host.js";

/** Options of `piReporter`: the widget key (one per job), plus the reporter's own bounds. */
export interface PiReporterOptions extends Omit<ReporterOptions, "onChange" | "headless" | "stream"> {
  /** The widget key (default `phasekit-run`); give each concurrent job its own. */
  readonly key?: string | undefined;
  /** A title line above the messages (default: the run's slug). */
  readonly title?: string | undefined;
}

const MARK: Record<ReporterLevel, string> = { info: "·", warning: "⚠", error: "✗" };

/** A `createReporter` factory for `runWorkflow({ createReporter: piReporter(ctx) })`. */
export function piReporter(ctx: PiContext, options: PiReporterOptions = {}): (info: { slug: string }) => Reporter {
  return (info) => {
    const { key = "phasekit-run", title, ...bounds } = options;
    if (!ctx.hasUI) return createReporter({ ...bounds, headless: true });
    let live = true;
    const use = (f: () => void): void => {
      if (!live) return;
      try {
        f();
      } catch {
        live = false; // a stale ctx (session replaced): nothing on screen belongs to us any more
      }
    };
    const said = new Set<string>();
    return createReporter({
      ...bounds,
      headless: false,
      // Only the reporter's own failure reports land here: show them, never write them under the TUI.
      stream: { write: (chunk: string) => use(() => ctx.ui.notify(chunk.trim(), "error")) },
      onChange(messages) {
        use(() => ctx.ui.setWidget(key, messages.length === 0 ? undefined : [title ?? `⚙ ${info.slug}`, ...messages.map((m) => `  ${MARK[m.level]} ${m.text}`)], { placement: "aboveEditor" }));
        for (const m of messages) {
          if (m.level !== "error" || said.has(m.id + m.createdAt)) continue;
          said.add(m.id + m.createdAt);
          use(() => ctx.ui.notify(m.text, "error"));
        }
      },
    });
  };
}
