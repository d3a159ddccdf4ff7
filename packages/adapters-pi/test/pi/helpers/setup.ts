/** A project with the example workflows and the extension loaded into a fake pi. */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, beforeEach } from "vitest";
import { createWorkflowExtension, type BranchEntry, type WorkflowExtensionOptions } from "../../../src/pi/index.js";
import { EXAMPLE_WORKFLOWS } from "../../../../../examples/pi/ship-scenario.js";
import { createFakePi, type FakePi } from "./fake-pi.js";

/** A temp folder with `project/.pi/workflows` = the example workflows; removed by `cleanup`. */
export function tempProject(): { root: string; cwd: string; workflows: string; global: string; cleanup: () => void } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "phasekit-pi-unit-"));
  const cwd = path.join(root, "project");
  const workflows = path.join(cwd, ".pi", "workflows");
  const global = path.join(root, "agent", "workflows");
  fs.mkdirSync(global, { recursive: true });
  fs.cpSync(EXAMPLE_WORKFLOWS, workflows, { recursive: true });
  return { root, cwd, workflows, global, cleanup: () => fs.rmSync(root, { recursive: true, force: true }) };
}

/** A fresh {@link tempProject} for each test of the file (the hooks are registered here), refreshed in place. */
export function useTempProject(): ReturnType<typeof tempProject> {
  const project = {} as ReturnType<typeof tempProject>;
  beforeEach(() => {
    Object.assign(project, tempProject());
  });
  afterEach(() => project.cleanup());
  return project;
}

/** The extension's options for a run with a plan folder (`plans/` in the project): its history is the record. */
export const WITH_PLANS = { options: { planRoot: "plans" } };

/** vi.waitFor's options for a wait on the fake host: it ends on the event; the bound only keeps a loaded CI machine from failing a slow one. */
export const WAIT = { timeout: 30_000, interval: 10 };

/** The end of an assistant turn that called no tool. */
export const endTurn = (pi: FakePi) => pi.emit("turn_end", { message: { role: "assistant", content: [] }, toolResults: [] } as never);

/** Loads the extension into a fake pi for `cwd`, with a manual clock and fixed run ids. */
export function loadExtension(
  project: { cwd: string; workflows: string; global: string },
  opts: { settledHost?: boolean; hasUI?: boolean; branch?: BranchEntry[]; options?: WorkflowExtensionOptions; builtinTools?: readonly string[] } = {},
): { pi: FakePi; clock: { now: number } } {
  const clock = { now: 1_700_000_000_000 };
  let ids = 0;
  const pi = createFakePi({ settledHost: opts.settledHost, hasUI: opts.hasUI, cwd: project.cwd, branch: opts.branch, ...(opts.builtinTools ? { builtinTools: opts.builtinTools } : {}) });
  createWorkflowExtension({
    roots: () => ({ global: project.global, project: project.workflows }),
    countdownMs: 3000,
    planRoot: false,
    now: () => clock.now,
    newTaskId: async () => `run${String(++ids).padStart(5, "0")}`,
    ...opts.options,
  })(pi.api);
  return { pi, clock };
}
