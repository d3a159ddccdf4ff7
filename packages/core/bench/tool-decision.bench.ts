/**
 * The calls an adapter makes on every tool call and every prompt: `checkTool` (allowed and blocked) and
 * `resolveActive`, on the release example 3 levels deep, against `advance` on the same state in the same run.
 * checkTool reads the walked path and one phase's tool list (no ActiveWorkflow), so an allowed tool costs about
 * a path walk; its goal is absolute (≤ 1 µs), the ratio is for reading the trend.
 */
import type { BenchSuite } from "../../../bench/harness.js";
import { medians } from "../../../bench/harness.js";
import { releaseRegistry } from "../../../examples/release-workflow.js";
// Through the package entry, as adapters call them: the boundary's never-throw wrapper is part of the cost.
import { advance, checkTool, resolveActive, STATE_SCHEMA_VERSION, type WorkflowState } from "@phasekit/core";

const registry = releaseRegistry();

function stateAt(path: Array<[string, number]>): WorkflowState {
  return {
    schemaVersion: STATE_SCHEMA_VERSION,
    workflowKey: "release",
    status: "running",
    failureReason: undefined,
    currentPath: path.map(([workflowKey, phaseIndex]) => ({ workflowKey, phaseIndex, loops: 0 })),
    globalStepCount: 4,
    loopCount: 0,
    taskId: "bench",
    taskDescription: "bench",
    startedAt: 1,
    updatedAt: 1,
    finishedAt: undefined,
    generation: 3,
    completionNotified: false,
    cancelPending: false,
    definitions: undefined,
  };
}

/** A tool the current phase's rules allow, and one they block (read from the example, not hard-coded). */
function tools(s: WorkflowState): { allowed: string; blocked: string } {
  const r = resolveActive(registry, s);
  if (!r.ok || r.active === null) throw new Error("bench state does not resolve");
  const rules = r.active.phase.tools;
  if (rules?.blacklist !== undefined && rules.blacklist.length > 0) return { allowed: "read", blocked: rules.blacklist[0] as string };
  if (rules?.whitelist !== undefined && rules.whitelist.length > 0) return { allowed: rules.whitelist[0] as string, blocked: "definitely-not-allowed" };
  return { allowed: "read", blocked: "" };
}

let sink: unknown;

export const suite: BenchSuite = {
  title: "core: tool decision and resolveActive",
  description: "Median per call of `checkTool` (allowed, blocked) and `resolveActive` at depth 3 of the release example, against `advance` on the same state.",
  async run() {
    const s = stateAt([["release", 1], ["review", 1], ["security", 0]]);
    const { allowed, blocked } = tools(s);
    const ctx = { now: 2 };
    const m = await medians({
      advance: () => (sink = advance(registry, s, ctx)),
      allowed: () => (sink = checkTool(registry, s, allowed)),
      blocked: () => (sink = blocked === "" ? null : checkTool(registry, s, blocked)),
      resolve: () => (sink = resolveActive(registry, s)),
    });
    void sink;
    const base = m.advance ?? NaN;
    const rows = [
      { subject: `checkTool, allowed tool (${allowed}) at depth 3`, baseline: "advance at depth 3", subjectNs: m.allowed ?? NaN, baselineNs: base, goal: "≤ 1 µs", met: (m.allowed ?? Infinity) <= 1_000 },
      { subject: "resolveActive at depth 3", baseline: "advance at depth 3", subjectNs: m.resolve ?? NaN, baselineNs: base },
    ];
    if (blocked !== "") rows.splice(1, 0, { subject: `checkTool, blocked tool (${blocked}) at depth 3`, baseline: "advance at depth 3", subjectNs: m.blocked ?? NaN, baselineNs: base });
    return rows;
  },
};
