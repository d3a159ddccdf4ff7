/**
 * `@phasekit/adapters-pi/otel`: a run as spans, checked against the OpenTelemetry SDK's in-memory exporter. From
 * the history afterwards (a finished run, a run whose runner died mid-step) and live (the trace follows a run
 * that is still going, and ends with it).
 */
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { SpanStatusCode } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { runWorkflow } from "../src/index.js";
import { traceRun } from "../src/otel/index.js";
import { spawnLockChild } from "./helpers/lock-children.js";
import { useTempRepos } from "./helpers/temp-repos.js";

const tempRepo = useTempRepos("phasekit-otel-");

function tracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, tracer: provider.getTracer("phasekit-test") };
}

const named = (spans: ReadableSpan[], name: string) => spans.filter((s) => s.name === name);
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

describe("traceRun", () => {
  it("a finished run, afterwards: a run span, its phases and steps (a failed attempt with an error status)", async () => {
    const repoRoot = tempRepo();
    let tries = 0;
    await runWorkflow({ repoRoot, target: "traced", toolName: "otel-test" }, async (ctx) => {
      await ctx.setPhase("build");
      await ctx.step("compile", {}, () => 1);
      await ctx.setPhase("test");
      return ctx.step("unit", {}, () => {
        if (++tries === 1) throw new Error("flaky");
        return 2;
      }, { retries: 1, backoffMs: 1 });
    });
    const { exporter, tracer } = tracing();
    const report = await traceRun("traced", { repoRoot, tracer, intervalMs: 10 });
    const spans = exporter.getFinishedSpans();
    expect(report.status).toBe("completed");
    const [run] = named(spans, "phasekit.run traced");
    expect(run).toBeDefined();
    const runId = run?.spanContext().spanId;
    expect(spans.filter((s) => s !== run).every((s) => parentOf(s) === runId)).toBe(true);
    expect(spans.every((s) => s.spanContext().traceId === report.traceId)).toBe(true);
    expect(named(spans, "phasekit.step compile")).toHaveLength(1);
    const unit = named(spans, "phasekit.step unit");
    expect(unit.map((s) => [s.attributes["phasekit.attempt"], s.status.code])).toEqual([
      [1, SpanStatusCode.ERROR],
      [2, SpanStatusCode.UNSET],
    ]);
    expect(unit[0]?.status.message).toContain("flaky");
    expect(named(spans, "phasekit.phase test")).toHaveLength(1);
    expect(run?.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("a run whose runner was SIGKILLed mid-step: its step span ends with an error, the run span with crashed", async () => {
    const repoRoot = tempRepo();
    const child = spawnLockChild("recover-child.mjs", [repoRoot, "killed"]);
    await child.waitFor(/^ready$/);
    child.proc.kill("SIGKILL");
    await child.exited;
    const { exporter, tracer } = tracing();
    const report = await traceRun("killed", { repoRoot, tracer, intervalMs: 10 });
    expect(report.status).toBe("crashed");
    const run = named(exporter.getFinishedSpans(), "phasekit.run killed")[0];
    expect(run?.status).toMatchObject({ code: SpanStatusCode.ERROR, message: "crashed" });
    expect(named(exporter.getFinishedSpans(), "phasekit.step a")[0]?.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("live: the trace follows a running run and ends when it ends", async () => {
    const repoRoot = tempRepo();
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    let started = () => {};
    const first = new Promise<void>((r) => (started = r));
    const run = runWorkflow({ repoRoot, target: "live", toolName: "otel-test" }, async (ctx) => {
      await ctx.step("one", {}, () => 1);
      started();
      await held;
      await ctx.step("two", {}, () => 2);
    });
    await first;
    const { exporter, tracer } = tracing();
    const traced = traceRun("live", { repoRoot, tracer, intervalMs: 10 });
    // Nothing ends the run span while the run is going.
    await new Promise((r) => setImmediate(r));
    expect(named(exporter.getFinishedSpans(), "phasekit.run live")).toHaveLength(0);
    release();
    await run;
    const report = await traced;
    expect(report.status).toBe("completed");
    expect(exporter.getFinishedSpans().map((s) => s.name).sort()).toEqual(["phasekit.run live", "phasekit.step one", "phasekit.step two"]);
  });
});
