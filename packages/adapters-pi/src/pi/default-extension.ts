/**
 * The file pi loads (`pi -e …/dist/pi/default-extension.js`, or the package's `"pi": { "extensions" }`
 * manifest): the extension with its defaults. `PHASEKIT_COUNTDOWN_MS`, `PHASEKIT_MAX_REMINDERS`,
 * `PHASEKIT_PLAN_ROOT` (a path, or `off`) and `PHASEKIT_STORE` (a `postgres://…` URL: durable runs in that store,
 * through @phasekit/store-postgres, loaded only then) adjust it without code.
 */
import { createWorkflowExtension } from "./extension.js";
import type { WorkflowExtensionOptions } from "./runtime.js";
import { lazyStore, parseStoreUrl, STORE_ENV } from "../store/store-url.js";
import type { PlanStore } from "../store/plan-store-port.js";

function fromEnv(env: NodeJS.ProcessEnv): WorkflowExtensionOptions {
  const num = (v: string | undefined): number | undefined => (v === undefined || v.trim() === "" ? undefined : Number(v));
  const plan = env["PHASEKIT_PLAN_ROOT"];
  const url = env[STORE_ENV];
  return {
    countdownMs: num(env["PHASEKIT_COUNTDOWN_MS"]),
    maxReminders: num(env["PHASEKIT_MAX_REMINDERS"]),
    planRoot: plan === undefined || plan === "" ? undefined : plan === "off" ? false : plan,
    ...(url === undefined || url === "" || plan === "off" ? {} : { store: sharedStore(url) }),
  };
}

/**
 * One store for every session of this process, opened at its first use (pi's start-up pays nothing for it). A
 * URL that does not parse, or a missing @phasekit/store-postgres, is reported where any store failure is: the
 * run is kept in the session only, and the message names the fix.
 */
function sharedStore(url: string): () => PlanStore {
  let parsed: ReturnType<typeof parseStoreUrl> | Error;
  try {
    parsed = parseStoreUrl(url, STORE_ENV);
  } catch (error) {
    parsed = error as Error;
  }
  const store = parsed instanceof Error ? lazyStore({ kind: "postgres", connectionString: "", namespace: "default", label: "postgres:?" }, () => Promise.reject(parsed)) : lazyStore(parsed);
  return () => store;
}

/** The default extension pi calls with its API. */
export default function phasekitWorkflows(pi: Parameters<ReturnType<typeof createWorkflowExtension>>[0]): void {
  createWorkflowExtension(fromEnv(process.env))(pi);
}
