/**
 * A pi run's end clears the pause and stop requests it leaves behind, as runWorkflow's end does
 * (run/control-requests.ts `clearEndedRequests`): a request filed for the run before the write that ended it
 * completed or cancelled belongs to that run, and `phasekit show` (what a person, or the model through bash,
 * reads) no longer lists it as pending. Each of pi's ends, with a pause and with a stop. The request is filed
 * where that end leaves it unhonoured: `phasekit pause/stop` run by the last phase's verify command (the only
 * moment between workflow_step's own look at the requests and its move), or the store's requestControl from
 * another process's point of view before a command or a turn ends the run. Before, every one stayed pending.
 *
 * A run that ends failed (its budget exhausted) keeps a stop, by runWorkflow's rule (run/run-end.ts, one end for
 * both): a failed run is not finished, and a stop filed for it ends its next resume cancelled. A pause filed
 * during it ends with it, as at every end: a pause is for a running run only (control-requests.ts
 * `signalsEndedBy`); before, it stayed and would pause the run's next resume.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { endTurn, loadExtension, useTempProject, WITH_PLANS } from "./helpers/setup.js";
import { resultText, type FakePi } from "./helpers/fake-pi.js";
import { BIN, phasekitInProcess } from "../cli/helpers/run-cli.js";
import { createFsPlanStore } from "../../src/store/plan-store.js";
import type { ControlRequest, ControlSignal } from "../../src/store/control-signals.js";

const project = useTempProject();
const ID = "run00001";
const status = () => (JSON.parse(fs.readFileSync(path.join(project.cwd, "plans", ID, "workflow.json"), "utf8")) as { status: string }).status;

/** One phase whose verify command files `signal` with the real CLI; a turn budget of 2 that fails the run. */
function workflow(signal: ControlSignal): void {
  const dir = path.join(project.workflows, "ended");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "workflow.yaml"), `name: "Ended"\nbudgets:\n  turns: 2\n  onExhausted: fail\nphases:\n  - work.md\n`);
  const file = `'${process.execPath}' '${BIN}' --repo '${project.cwd}' --plan-root '${path.join(project.cwd, "plans")}' ${signal} ${ID}`;
  fs.writeFileSync(path.join(dir, "work.md"), `---\nid: work\nname: Work\ngates:\n  verify:\n    commands: [${JSON.stringify(file)}]\n---\nWork.\n`);
}

/** The store's requestControl, as `phasekit pause/stop` files it from another process. */
async function file(signal: ControlSignal): Promise<ControlRequest> {
  const store = createFsPlanStore({ repoRoot: project.cwd, planRoot: "plans" });
  try {
    const r = await store.requestControl(ID, signal, { reason: "from outside" });
    if (!r.ok) throw r.error;
    return r.request;
  } finally {
    await store.close();
  }
}

/** Every request of the run still pending, as the store reads them. */
async function pending(): Promise<ControlRequest[]> {
  const store = createFsPlanStore({ repoRoot: project.cwd, planRoot: "plans" });
  try {
    const out: ControlRequest[] = [];
    for (const signal of ["stop", "pause"] as const) {
      const r = await store.readControl(ID, signal);
      if (!r.ok) throw r.error;
      if (r.request !== null) out.push(r.request);
    }
    return out;
  } finally {
    await store.close();
  }
}

type End = (pi: FakePi, signal: ControlSignal) => Promise<void>;

const ENDS: Array<[string, End, string]> = [
  [
    "completed through workflow_step",
    async (pi) => {
      const r = resultText(await pi.step({ action: "next" }));
      expect(r).toContain("complete");
      expect(r).not.toMatch(/paused|stopped|from outside/iu);
    },
    "completed",
  ],
  [
    "cancelled by /cancel-workflow",
    async (pi, signal) => {
      await file(signal);
      await pi.command("cancel-workflow");
    },
    "cancelled",
  ],
  [
    "cancelled by a new run replacing it",
    async (pi, signal) => {
      await file(signal);
      pi.confirmAnswers.push(true);
      await pi.command("workflow", "ended Another");
    },
    "cancelled",
  ],
  [
    "failed by its exhausted budget",
    async (pi, signal) => {
      await file(signal);
      for (let turn = 0; turn < 4 && status() === "running"; turn++) await endTurn(pi);
    },
    "failed",
  ],
];

const CASES = ENDS.flatMap(([name, end, ended]) => (["pause", "stop"] as const).map((signal) => [name, signal, end, ended] as const));

describe("pi: a run's end clears the pause and stop requests filed before it", () => {
  it.each(CASES)("%s, with a %s filed", async (_name, signal, end, ended) => {
    workflow(signal);
    const { pi } = loadExtension(project, WITH_PLANS);
    await pi.emit("session_start", {});
    await pi.command("workflow", "ended Count");
    expect(status()).toBe("running");
    await end(pi, signal);
    expect(status()).toBe(ended);
    const sentBefore = pi.sent.length;
    await pi.emit("agent_end", { messages: [] } as never);
    await pi.emit("agent_settled", { aborted: false } as never);

    const left = await pending();
    const show = await phasekitInProcess(["--repo", project.cwd, "--plan-root", path.join(project.cwd, "plans"), "--json", "show", ID, "--fields", "pending"]);
    expect(show.code, show.stderr).toBe(0);
    const shown = JSON.parse(show.stdout) as { pending: unknown };
    if (ended === "failed" && signal === "stop") {
      // runWorkflow's rule: a failed run is not finished, and keeps a stop filed for it for its next resume.
      expect(left.map((r) => r.signal)).toEqual([signal]);
      expect(shown.pending).toMatchObject({ signal });
    } else {
      expect(left).toEqual([]);
      expect(shown.pending).toBeNull();
    }
    // Nothing the model is told after the end says the run was paused or stopped from outside.
    expect(pi.sent.slice(sentBefore).map((m) => m.content).join("\n")).not.toMatch(/from outside/u);
    expect(pi.userMessages.join("\n")).not.toMatch(/from outside/u);
    await pi.emit("session_shutdown", {});
  });
});
