/**
 * The pi extension's hot paths against pi-workflows 1.0.0 in the same run, interleaved round by round:
 * rebuilding the state from a 100,000-entry session branch (most entries not ours) and the `tool_call` decision.
 */
import * as path from "node:path";
import type { BenchSuite } from "../../../bench/harness.js";
import { EXAMPLE_WORKFLOWS } from "../../../examples/pi/ship-scenario.js";
import { createRuntime, loadDefinitionFolders, rebuildState, type BranchEntry, type PiApi } from "../src/pi/index.js";
import { checkTool, start, advance, toPersisted, type WorkflowState } from "@phasekit/core";
import { interleaved, loadPeer } from "./pi-peer.js";
import { sessionRows } from "./pi-session-rows.js";

const ENTRIES = 100_000;
let sink: unknown;

/** A branch of `ENTRIES` entries: a run started early with 10 state changes, then messages and tool results. */
function branchWith(stateEntries: unknown[]): BranchEntry[] {
  const branch: BranchEntry[] = [];
  for (let i = 0; i < ENTRIES; i++) {
    if (i >= 100 && i < 100 + stateEntries.length * 50 && (i - 100) % 50 === 0) {
      branch.push({ type: "custom", customType: "workflow:state", data: stateEntries[(i - 100) / 50] });
    } else if (i % 7 === 0) {
      branch.push({ type: "custom", customType: "other-extension:note", data: { n: i } });
    } else {
      branch.push({ type: "message", id: `m${i}`, data: undefined });
    }
  }
  return branch;
}

function ourStates(): WorkflowState[] {
  const registry = loadDefinitionFolders({ project: EXAMPLE_WORKFLOWS }).registry;
  const s = start(registry, { workflowKey: "ship", taskId: "benchrun", taskDescription: "bench" }, { now: 1 });
  if (!s.ok) throw s.error;
  const out = [s.state];
  let cur = s.state;
  for (let i = 0; i < 9; i++) {
    const r = advance(registry, cur, { now: 2 + i });
    if (!r.ok) break;
    cur = r.state;
    out.push(cur);
  }
  return out.map((state) => {
    const p = toPersisted(state);
    if (!p.ok) throw new Error(p.error.message);
    return p.state;
  });
}

function peerStates(): unknown[] {
  return Array.from({ length: 10 }, (_, i) => ({
    active: true,
    workflowKey: "ship",
    currentPath: [{ workflowKey: "ship", phaseIndex: i % 3 }],
    globalStepCount: i,
    taskId: "wf-1-abcdef",
    taskDescription: "bench",
    startedAt: 1,
    completionNotified: false,
    cancelled: false,
  }));
}

/** The example workflows as pi-workflows' loaded definitions (its in-memory shape). */
function peerDefinitions(): Record<string, unknown> {
  const plan = { id: "plan", name: "Plan", emoji: "📋", instructions: "Plan.", tools: { blacklist: ["write", "edit"] } };
  const test = { id: "test", name: "Test", emoji: "🧪", instructions: "Test.", tools: { whitelist: ["read", "bash"] } };
  const review = { id: "review", name: "Review", emoji: "🔍", instructions: "Review." };
  const report = { id: "report", name: "Report", emoji: "📝", instructions: "Report." };
  const check = { name: "Check", commandName: "", initialMessage: "", show: "workflows", phases: [test, review] };
  const ship = { name: "Ship a change", commandName: "ship", initialMessage: "go", phases: [plan, { subworkflow: true, workflowKey: "check", resolved: check }, report] };
  return { ship, check };
}

export const suite: BenchSuite = {
  title: "pi extension: state rebuild, tool_call, workflow_step and session_start",
  description:
    "Median per call, phasekit against pi-workflows 1.0.0 (npm pack, same run, contenders interleaved round by round). Rebuild: the newest valid `workflow:state` entry of a 100,000-entry branch whose last state entry is near the start (so both scan ~99,500 entries), each reading its own entry format; the scan costs the same, and the difference on a first read is core's `migrateState` (zod) parsing the one entry it finds; pi keeps entry objects for the session's lifetime, so later rebuilds (tree moves, reloads) hit the per-entry memo. tool_call: a blocked and an allowed tool in the nested Test phase (whitelist) of the example workflow; the hook asks core once per tool name and state (`checkTool`, shown separately) and answers repeated calls from memory.",
  async run() {
    const peer = await loadPeer();
    const rounds = process.env["CI"] ? 15 : 41;
    const ours = branchWith(ourStates());
    const theirs = branchWith(peerStates());
    // First read: the newest state entry gets a data object never parsed before (a pool of identical copies, made
    // up front, so the entry keeps its shape and the copying stays out of the timing).
    const newest = ours.findLastIndex((e) => e.customType === "workflow:state");
    const entry = ours[newest] as { data: unknown };
    const pool = Array.from({ length: (rounds + 2) * 10 }, () => structuredClone(entry.data));
    let next = 0;
    const fresh = (): BranchEntry[] => {
      entry.data = pool[next++ % pool.length];
      return ours;
    };
    const rebuild = interleaved(
      {
        phasekitCold: () => (sink = rebuildState(fresh())),
        phasekitWarm: () => (sink = rebuildState(ours)),
        piWorkflows: () => (sink = peer.reconstructState({ sessionManager: { getBranch: () => theirs } })),
      },
      { rounds, batch: 10 },
    );

    const registry = loadDefinitionFolders({ project: EXAMPLE_WORKFLOWS }).registry;
    const inTest: WorkflowState = ourStates()[1] as WorkflowState;
    const noop = () => undefined;
    const rt = createRuntime({ on: noop, registerTool: noop, registerCommand: noop, registerMessageRenderer: noop, sendMessage: noop, sendUserMessage: noop, appendEntry: noop, setSessionName: noop } as PiApi, { planRoot: false });
    rt.registry = registry;
    rt.state = inTest;
    const defs = peerDefinitions();
    const peerInTest = { ...(peerStates()[0] as object), currentPath: [{ workflowKey: "ship", phaseIndex: 1 }, { workflowKey: "check", phaseIndex: 0 }] };
    const tool = interleaved(
      {
        hookBlocked: () => (sink = rt.decide("write")),
        coreBlocked: () => (sink = checkTool(registry, inTest, "write")),
        piWorkflowsBlocked: () => (sink = peer.handleToolCall({ toolName: "write" }, peerInTest, defs)),
        hookAllowed: () => (sink = rt.decide("bash")),
        coreAllowed: () => (sink = checkTool(registry, inTest, "bash")),
        piWorkflowsAllowed: () => (sink = peer.handleToolCall({ toolName: "bash" }, peerInTest, defs)),
      },
      { rounds, batch: 1000 },
    );
    void sink;
    void path;
    const row = (subject: string, baseline: string, s: number | undefined, b: number | undefined, goal: string) => ({ subject, baseline, subjectNs: s as number, baselineNs: b as number, goal });
    return [
      row("rebuildState, 100k entries, first read", "pi-workflows reconstructState", rebuild["phasekitCold"], rebuild["piWorkflows"], "≤ 5 ms and ≤ 1.0×"),
      row("rebuildState, 100k entries, entries read before", "pi-workflows reconstructState", rebuild["phasekitWarm"], rebuild["piWorkflows"], "≤ 5 ms and ≤ 1.0×"),
      row("tool_call hook decision, blocked", "pi-workflows handleToolCall", tool["hookBlocked"], tool["piWorkflowsBlocked"], "≤ 1.0×"),
      row("tool_call hook decision, allowed", "pi-workflows handleToolCall", tool["hookAllowed"], tool["piWorkflowsAllowed"], "≤ 1.0×"),
      row("core checkTool (the hook's first call after a state change), blocked", "pi-workflows handleToolCall", tool["coreBlocked"], tool["piWorkflowsBlocked"], "report"),
      row("core checkTool (first call after a state change), allowed", "pi-workflows handleToolCall", tool["coreAllowed"], tool["piWorkflowsAllowed"], "report"),
      ...(await sessionRows(peer)),
    ];
  },
};
