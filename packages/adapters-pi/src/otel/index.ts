/**
 * `@phasekit/adapters-pi/otel`: a run as OpenTelemetry spans (one for the run, one per phase, one per step and
 * failed attempt), live while it runs or afterwards from the history of a finished or crashed run. It consumes
 * `watchRun`, so it reads what the CLI and the inspector read; `@opentelemetry/api` is an optional peer: the
 * caller passes a Tracer from its own SDK set-up (only this subpath imports the API).
 */
import { context, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from "@opentelemetry/api";
import { watchRun, type RunEvent, type WatchRunOptions } from "../cli/watch-run.js";

/** Options of `traceRun`: where the run is (as `watchRun`), and the tracer to emit with. */
export interface TraceRunOptions extends WatchRunOptions {
  tracer: Tracer;
}

/** What `traceRun` emitted. */
export interface TraceRunReport {
  /** The run span's trace id. */
  traceId: string;
  /** How the run stood when the trace ended. */
  status: string;
  spans: number;
}

/**
 * Emits run `target` as spans: `phasekit.run <id>` (from its first event to its end), `phasekit.phase <name>`
 * (children of the run, while the run's phase is that one), and `phasekit.step <id>` (children of the run, from a
 * step's start to its end; a failed attempt or a step interrupted by a crash ends with an error status). Resolves
 * when the run has nothing more coming (as `watchRun`); on a finished run that is at once, from its history.
 */
export async function traceRun(target: string, options: TraceRunOptions): Promise<TraceRunReport> {
  const { tracer, ...watch } = options;
  let run: Span | undefined;
  let phase: { name: string; span: Span } | undefined;
  const running = new Map<string, Span>();
  let spans = 0;
  let status = "unknown";
  let lastAt = 0;
  const under = () => trace.setSpan(context.active(), run as Span);
  const start = (name: string, at: number, attributes: Attributes): Span => {
    spans++;
    return tracer.startSpan(name, { startTime: at, attributes }, run === undefined ? context.active() : under());
  };
  for await (const e of watchRun(target, watch)) {
    const at = Math.max(Date.parse(e.at), lastAt);
    lastAt = at;
    run ??= start(`phasekit.run ${target}`, at, { "phasekit.run": target });
    if (e.type === "status") {
      status = e.status;
      run.setAttribute("phasekit.status", e.status);
      if (e.phase !== (phase?.name ?? null)) {
        phase?.span.end(at);
        phase = e.phase === null ? undefined : { name: e.phase, span: start(`phasekit.phase ${e.phase}`, at, { "phasekit.phase": e.phase }) };
      }
    } else if (e.type === "step") stepSpan(e, at);
    else if (e.type === "end") {
      status = e.status;
      for (const [, span] of running) endWithError(span, at, "interrupted: its runner stopped mid-step");
      phase?.span.end(at);
      if (e.status === "failed" || e.status === "crashed" || e.status === "unreadable") run.setStatus({ code: SpanStatusCode.ERROR, message: e.status });
      run.end(at);
    } else if (e.type === "budget") run.addEvent("budget", { "phasekit.turns": e.used.turns, "phasekit.toolCalls": e.used.toolCalls, "phasekit.tokens": e.used.tokens, "phasekit.cost": e.used.cost }, at);
    else run.addEvent(e.text, { "phasekit.event": e.event }, at);
  }
  return { traceId: run?.spanContext().traceId ?? "", status, spans };

  function stepSpan(e: Extract<RunEvent, { type: "step" }>, at: number): void {
    const key = `${e.step}#${e.attempt}`;
    const attributes = { "phasekit.step": e.step, "phasekit.attempt": e.attempt };
    if (e.status === "running") {
      if (!running.has(key)) running.set(key, start(`phasekit.step ${e.step}`, at, attributes));
      return;
    }
    const began = running.get(key) ?? start(`phasekit.step ${e.step}`, e.durationMs === null ? at : at - e.durationMs, attributes);
    running.delete(key);
    if (e.status === "completed") began.end(at);
    else endWithError(began, at, e.status === "failed" ? (e.error ?? "failed") : "interrupted: its runner stopped mid-step");
  }
}

function endWithError(span: Span, at: number, message: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message });
  span.end(at);
}
