/**
 * The file pi loads (`pi -e …/dist/pi/default-extension.js`, or the package's `"pi": { "extensions" }`
 * manifest): the extension with its defaults. `PHASEKIT_COUNTDOWN_MS`, `PHASEKIT_MAX_REMINDERS` and
 * `PHASEKIT_PLAN_ROOT` (a path, or `off`) adjust it without code.
 */
import { createWorkflowExtension } from "./extension.js";
import type { WorkflowExtensionOptions } from "./runtime.js";

function fromEnv(env: NodeJS.ProcessEnv): WorkflowExtensionOptions {
  const num = (v: string | undefined): number | undefined => (v === undefined || v.trim() === "" ? undefined : Number(v));
  const plan = env["PHASEKIT_PLAN_ROOT"];
  return {
    countdownMs: num(env["PHASEKIT_COUNTDOWN_MS"]),
    maxReminders: num(env["PHASEKIT_MAX_REMINDERS"]),
    planRoot: plan === undefined || plan === "" ? undefined : plan === "off" ? false : plan,
  };
}

/** The default extension pi calls with its API. */
export default function phasekitWorkflows(pi: Parameters<ReturnType<typeof createWorkflowExtension>>[0]): void {
  createWorkflowExtension(fromEnv(process.env))(pi);
}
