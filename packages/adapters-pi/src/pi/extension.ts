/**
 * `createWorkflowExtension(options)`: the whole extension as a pi extension factory, built from parts that
 * another extension can also compose into its own (runtime, hooks, tool, commands, renderers).
 */
import { createCommands } from "./commands.js";
import { createContinuation } from "./continuation.js";
import type { PiApi, PiExtension } from "./host.js";
import { registerHooks } from "./hooks.js";
import { registerRunControls } from "./run-controls.js";
import { registerRenderers } from "./renderers.js";
import { createRuntime, type WorkflowExtensionOptions } from "./runtime.js";
import { createStepTool } from "./step-tool.js";

/** A pi extension that runs phasekit workflows (pi-workflows 1.0.0 definitions and sessions included). */
export function createWorkflowExtension(options: WorkflowExtensionOptions = {}): PiExtension {
  checkOptions(options);
  return (pi: PiApi) => {
    const rt = createRuntime(pi, options);
    const cont = createContinuation(rt);
    registerHooks(pi, rt, cont);
    registerRunControls(pi, rt);
    pi.registerTool(createStepTool(rt, cont));
    for (const [name, command] of Object.entries(createCommands(rt, cont))) pi.registerCommand(name, command);
    registerRenderers(pi);
  };
}

function checkOptions(o: WorkflowExtensionOptions): void {
  const bad = (field: string, value: unknown, hint: string): never => {
    throw new TypeError(`[phasekit] [pi] option ${field}: ${JSON.stringify(value)} is not usable; ${hint}`);
  };
  if (o.countdownMs !== undefined && (!Number.isFinite(o.countdownMs) || o.countdownMs < 0)) bad("countdownMs", o.countdownMs, "pass a number of milliseconds ≥ 0");
  if (o.maxReminders !== undefined && (!Number.isInteger(o.maxReminders) || o.maxReminders < 0)) bad("maxReminders", o.maxReminders, "pass an integer ≥ 0");
  if (o.planRoot !== undefined && o.planRoot !== false && (typeof o.planRoot !== "string" || o.planRoot === "")) bad("planRoot", o.planRoot, "pass a folder path or false");
  if (o.store !== undefined && typeof o.store !== "function") bad("store", typeof o.store, "pass a function (cwd) => PlanStore");
}
