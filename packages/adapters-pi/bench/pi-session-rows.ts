/**
 * The extension's per-event costs that include I/O, against pi-workflows 1.0.0 in the same run: one
 * `workflow_step` (core's move, the session entry and the durable plan-folder write under the run's lock) and
 * `session_start` (definitions, state rebuild, the run's claim). pi-workflows writes no plan folder; its numbers
 * are what it does for the same event (advance + state entry; load the definitions + rebuild).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { medians, type BenchRow } from "../../../bench/harness.js";
import { median } from "../../../bench/suites/interleave.js";
import { EXAMPLE_WORKFLOWS } from "../../../examples/pi/ship-scenario.js";
import { createWorkflowExtension } from "../src/pi/index.js";
import { createFakePi, type FakePi } from "../test/pi/helpers/fake-pi.js";
import type { PiWorkflowsPeer } from "./pi-peer.js";

const LIMIT_NS = 2_000_000;

async function extensionIn(cwd: string): Promise<FakePi> {
  const pi = createFakePi({ cwd, settledHost: true });
  let n = 0;
  createWorkflowExtension({ roots: () => ({ project: path.join(cwd, ".pi", "workflows") }), countdownMs: 600_000, newTaskId: async () => `bench${String(++n).padStart(3, "0")}` })(pi.api);
  await pi.emit("session_start", {});
  return pi;
}

/** Rows: workflow_step with its plan-folder write, session_start in a running pi and in a new process. */
export async function sessionRows(peer: PiWorkflowsPeer): Promise<BenchRow[]> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "phasekit-bench-pi-"));
  const project = (name: string): string => {
    const cwd = path.join(root, name);
    fs.mkdirSync(path.join(cwd, ".pi"), { recursive: true });
    fs.cpSync(EXAMPLE_WORKFLOWS, path.join(cwd, ".pi", "workflows"), { recursive: true });
    return cwd;
  };
  try {
    // Two projects, so the "new process" rows (which let their run go and claim it again) never touch the run
    // the step and warm rows hold.
    const cwd = project("a");
    const cwdB = project("b");
    const pi = await extensionIn(cwd);
    await pi.command("workflow", "ship bench");
    await pi.step({ action: "next" }); // into Check: Test
    const piB = await extensionIn(cwdB);
    await piB.command("workflow", "ship bench");
    let flip = false;
    const defs = peer.loadWorkflows(cwd);
    const peerPlan = { active: true, workflowKey: "ship", currentPath: [{ workflowKey: "ship", phaseIndex: 0 }], globalStepCount: 0, taskId: "wf-1", taskDescription: "bench", startedAt: 1, completionNotified: false, cancelled: false };
    const peerBranch: unknown[] = [];
    const sink = { appendEntry: (type: string, data: unknown) => void peerBranch.push({ type: "custom", customType: type, data }) };
    // A new process: a fresh extension on the same session; its shutdown (releasing the run) is not timed.
    const fresh: FakePi[] = [];
    // session_start alone (the handler pi awaits), timed inside the task: the claim it leaves running and the
    // previous instance's shutdown are in the task's own time, reported beside it.
    const startOnly: number[] = [];
    const m = await medians(
      {
        // Test → Review (next), Review → Test (loop): each a real move, entry and durable write.
        step: async () => {
          flip = !flip;
          const r = await pi.step({ action: flip ? "next" : "loop" });
          if ("error" in r || pi.notices.length > 0) throw new Error(`workflow_step: ${"error" in r ? r.error : pi.notices.map((x) => x.text).join("; ")}`);
        },
        piWorkflowsStep: () => {
          const r = peer.advancePhase(peerPlan, defs);
          peer.persistState(sink, r.newState);
          if (peerBranch.length > 1000) peerBranch.length = 0;
        },
        sessionStartWarm: () => pi.emit("session_start", {}),
        sessionStartNewProcess: async () => {
          const other = fresh.pop();
          if (other !== undefined) await other.emit("session_shutdown", {});
          else await piB.emit("session_shutdown", {}); // let the run go, so the new instance claims it
          const next = createFakePi({ cwd: cwdB, settledHost: true, branch: piB.branch });
          let n = 0;
          createWorkflowExtension({ roots: () => ({ project: path.join(cwdB, ".pi", "workflows") }), countdownMs: 600_000, newTaskId: async () => `x${++n}` })(next.api);
          const t = process.hrtime.bigint();
          await next.emit("session_start", {});
          startOnly.push(Number(process.hrtime.bigint() - t));
          fresh.push(next);
        },
        piWorkflowsSessionStart: () => {
          peer.loadWorkflows(cwd);
          peer.reconstructState({ sessionManager: { getBranch: () => pi.branch } });
        },
      },
      { time: 800 },
    );
    for (const f of fresh) await f.emit("session_shutdown", {});
    await pi.emit("session_shutdown", {});
    const row = (subject: string, s: number, b: number, baseline: string): BenchRow => ({ subject, baseline, subjectNs: s, baselineNs: b, goal: "≤ 2 ms", met: s <= LIMIT_NS });
    return [
      row("workflow_step incl. plan-folder write (fs, under the run's lock)", m["step"] as number, m["piWorkflowsStep"] as number, "pi-workflows advancePhase + persistState (no durable write)"),
      row("session_start, definitions unchanged (a session change in a running pi)", m["sessionStartWarm"] as number, m["piWorkflowsSessionStart"] as number, "pi-workflows initSession (loadWorkflows + reconstructState)"),
      row("session_start in a new process (load definitions, rebuild, UI; the run's claim goes on in the background)", median(startOnly), m["piWorkflowsSessionStart"] as number, "pi-workflows initSession (loadWorkflows + reconstructState)"),
      { subject: "the same with the claim (lock, run log, write) and the previous instance's shutdown", baseline: "pi-workflows initSession (loadWorkflows + reconstructState)", subjectNs: m["sessionStartNewProcess"] as number, baselineNs: m["piWorkflowsSessionStart"] as number, goal: "report" },
    ];
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}
