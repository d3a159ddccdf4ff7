/** A project with the example workflows and the extension loaded into a fake pi. */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
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
