/**
 * How an adapter drives @phasekit/core: start a run, feed it events through `reduce(registry, state, event,
 * ctx)`, keep the state of each accepted outcome (a refusal changes nothing), and render from `resolveActive`.
 * `walkRelease` is the demo's script; docs/core.md quotes it and the tests run it.
 */
import { checkTool, endOfRunMessage, reduce, refusalToError, resolveActive, start, statusLine } from "@phasekit/core";
import type { Happening, TransitionOutcome, WorkflowEvent, WorkflowRegistry, WorkflowState } from "@phasekit/core";
import { releaseRegistry } from "./release-workflow.js";

/** The status line of a state, or why there is none (a finished run has no current phase). */
export function describe(state: WorkflowState, registry: WorkflowRegistry = releaseRegistry()): string {
  const r = resolveActive(registry, state);
  if (!r.ok) return `(broken: ${r.error.code})`;
  if (r.active === null) return `(${state.status})`;
  const line = statusLine(r.active);
  return line.ok ? line.text : `(broken: ${line.error.code})`;
}

/** Walks the release example through start, sub-workflows, loops and a two-step cancel; returns printable lines. */
export function walkRelease(): string[] {
  const registry = releaseRegistry();
  let now = 1_700_000_000_000;
  const started = reduce(registry, null, { type: "start", workflowKey: "release", taskId: "demo-0001", taskDescription: "Ship v1.2.0" }, { now });
  if (!started.ok) throw refusalToError(started.error);
  let state = started.state;
  const lines = [`start            → ${describe(state, registry)}`];

  const script: WorkflowEvent[] = [
    { type: "advance" }, // Build → into review: Static Analysis
    { type: "advance" }, // → into security (the last entry of review): Threat Model
    { type: "advance" }, // → Dependency Audit
    { type: "loop" }, // security restarts: Threat Model (1 of 1 loops)
    { type: "advance" }, // → Dependency Audit
    { type: "loop" }, // refused: MAX_LOOPS_REACHED
    { type: "advance" }, // security and review both finish → Publish
    { type: "cancel" }, // armed
    { type: "cancel" }, // confirmed
  ];
  for (const event of script) {
    now += 1_000;
    const outcome: TransitionOutcome = reduce(registry, state, event, { now });
    if (outcome.ok) state = outcome.state; // a refusal changes nothing: keep the state you had
    const what = outcome.ok ? summarize(outcome.happened) : `refused ${outcome.error.code}`;
    lines.push(`${event.type.padEnd(8)} ${what.padEnd(28)} → ${describe(state, registry)}  [step ${state.globalStepCount}]`);
  }
  const end = endOfRunMessage(registry, state);
  if (end.ok) lines.push("", end.text);
  return lines;
}

/** A short label for what happened: its type, plus the sub-workflows left and entered. */
export function summarize(happened: Happening): string {
  const left = "exited" in happened && happened.exited.length > 0 ? ` -${happened.exited.join(" -")}` : "";
  const entered = "entered" in happened && happened.entered.length > 0 ? ` +${happened.entered.join(" +")}` : "";
  return `${happened.type}${left}${entered}`;
}

/** The tool decision for `edit` in the review's Static Analysis phase (blacklisted there). */
export function editDuringStaticAnalysis(): string {
  const registry = releaseRegistry();
  const s = start(registry, { workflowKey: "release", taskId: "demo-0002", taskDescription: "Ship" }, { now: 0 });
  if (!s.ok) throw refusalToError(s.error);
  const inReview = reduce(registry, s.state, { type: "advance" }, { now: 1 });
  if (!inReview.ok) throw refusalToError(inReview.error);
  const decision = checkTool(registry, inReview.state, "edit");
  if (!decision.ok) return `blocked: ${decision.error.message}`; // a broken run: fail closed
  return decision.allowed ? "allowed" : decision.reason;
}
