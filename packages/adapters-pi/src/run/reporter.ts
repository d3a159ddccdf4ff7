/**
 * Short, bounded progress messages for a run: a UI host renders the current list, a headless host gets one
 * `level: text` line per message. Timers are injected so tests never sleep, and unref'd so a forgotten
 * reporter never keeps the process alive.
 */
import { workflowError } from "@phasekit/core";
import { formatMessageText, MESSAGE_MAX_CODE_POINTS } from "./message-text.js";

/** How serious a message is; it also decides how long the message stays. */
export type ReporterLevel = "info" | "warning" | "error";

/** One message currently shown. */
export interface ReporterMessage {
  readonly id: string;
  readonly level: ReporterLevel;
  readonly text: string;
  readonly createdAt: number;
  readonly expiresAt: number;
}

/** The timer surface the reporter uses; the default is the global clock with unref'd timers. */
export interface ReporterClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Where headless lines go (process.stderr by default). */
export interface ReporterStream {
  write(chunk: string): unknown;
}

/** Options of `createReporter`; every field is optional. */
export interface ReporterOptions {
  /** Called with the current list after every change (add, replace, expire, dismiss). */
  onChange?: ((messages: readonly ReporterMessage[]) => void) | undefined;
  /** Write `level: text` lines to `stream`; defaults to true when no `onChange` is given. */
  headless?: boolean | undefined;
  stream?: ReporterStream | undefined;
  clock?: ReporterClock | undefined;
  /** Messages kept at once; the oldest is evicted first. Default 5. */
  maxMessages?: number | undefined;
  /** Bound of one message in code points. Default 140. */
  maxLength?: number | undefined;
  /** Lifetime per level in ms. Defaults: info 8 s, warning 12 s, error 20 s. */
  ttlMs?: { [L in ReporterLevel]?: number | undefined } | undefined;
}

/** Per-call options of a report: the same `id` replaces the message already shown under it (ids without one are `auto:<n>`). */
export interface ReportOptions {
  id?: string | undefined;
}

/** The reporter a run hands to its body. After `dispose()` every method is a no-op. */
export interface Reporter {
  report(level: ReporterLevel, text: string, options?: ReportOptions): string | undefined;
  info(text: string, options?: ReportOptions): string | undefined;
  warning(text: string, options?: ReportOptions): string | undefined;
  error(text: string, options?: ReportOptions): string | undefined;
  dismiss(id: string): void;
  messages(): readonly ReporterMessage[];
  readonly disposed: boolean;
  dispose(): void;
}

/** Default lifetimes per level, in ms. */
export const DEFAULT_TTL_MS: Readonly<Record<ReporterLevel, number>> = { info: 8_000, warning: 12_000, error: 20_000 };

/** The real clock: `Date.now` and timers that do not keep the event loop alive. */
export const systemReporterClock: ReporterClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

interface Entry {
  message: ReporterMessage;
  timer: unknown;
}

function checkPositiveInt(field: string, value: number | undefined): void {
  if (value === undefined || (Number.isInteger(value) && value >= 1)) return;
  throw workflowError("reporter", "INVALID_OPTIONS", `${field} must be a positive integer, got ${String(value)}.`, {
    field,
    value,
    hint: `pass an integer >= 1 for ${field}, or leave it out for the default`,
  });
}

function checkOptions(options: ReporterOptions): void {
  checkPositiveInt("maxMessages", options.maxMessages);
  checkPositiveInt("maxLength", options.maxLength);
  for (const [level, ms] of Object.entries(options.ttlMs ?? {})) checkPositiveInt(`ttlMs.${level}`, ms);
}

/** Creates a reporter; options are checked at once (a bad bound is an INVALID_OPTIONS error). */
export function createReporter(options: ReporterOptions = {}): Reporter {
  checkOptions(options);
  const clock = options.clock ?? systemReporterClock;
  const headless = options.headless ?? options.onChange === undefined;
  const stream = options.stream ?? process.stderr;
  const maxMessages = options.maxMessages ?? 5;
  const maxLength = options.maxLength ?? MESSAGE_MAX_CODE_POINTS;
  // A level given as undefined keeps its default (a spread would copy the undefined and expire messages at NaN).
  const ttl: Record<ReporterLevel, number> = { ...DEFAULT_TTL_MS };
  for (const [level, ms] of Object.entries(options.ttlMs ?? {})) if (ms !== undefined) ttl[level as ReporterLevel] = ms;
  // Insertion order of the Map is the eviction order: a replaced message moves to the end (it is new again).
  const entries = new Map<string, Entry>();
  let disposed = false;
  let counter = 0;

  const snapshot = (): readonly ReporterMessage[] => [...entries.values()].map((e) => e.message);

  const notify = (): void => {
    if (disposed || options.onChange === undefined) return;
    // A throwing UI callback runs inside a timer too, where it would crash the process; it gets one line instead.
    try {
      options.onChange(snapshot());
    } catch (error) {
      stream.write(`error: [phasekit] [reporter] onChange threw: ${formatMessageText(String(error), maxLength)}\n`);
    }
  };

  const remove = (id: string): boolean => {
    const entry = entries.get(id);
    if (entry === undefined) return false;
    clock.clearTimeout(entry.timer);
    entries.delete(id);
    return true;
  };

  const report = (level: ReporterLevel, text: string, opts: ReportOptions = {}): string | undefined => {
    if (disposed) return undefined;
    const id = opts.id ?? `auto:${++counter}`;
    const now = clock.now();
    // Frozen: hosts receive these objects in every onChange list and must not be able to edit what others see.
    const message: ReporterMessage = Object.freeze({ id, level, text: formatMessageText(text, maxLength), createdAt: now, expiresAt: now + ttl[level] });
    remove(id);
    while (entries.size >= maxMessages) {
      const oldest = entries.keys().next().value;
      if (oldest === undefined) break;
      remove(oldest);
    }
    const timer = clock.setTimeout(() => {
      if (entries.get(id)?.message === message && remove(id)) notify();
    }, ttl[level]);
    entries.set(id, { message, timer });
    if (headless) stream.write(`${level}: ${message.text}\n`);
    notify();
    return id;
  };

  return {
    report,
    info: (text, opts) => report("info", text, opts),
    warning: (text, opts) => report("warning", text, opts),
    error: (text, opts) => report("error", text, opts),
    dismiss: (id) => {
      if (!disposed && remove(id)) notify();
    },
    messages: () => (disposed ? [] : snapshot()),
    get disposed() {
      return disposed;
    },
    dispose: () => {
      if (disposed) return;
      const hadMessages = entries.size > 0;
      for (const id of [...entries.keys()]) remove(id);
      // One last empty list clears the host's widget; from here on nothing is written or called.
      if (hadMessages) notify();
      disposed = true;
    },
  };
}
