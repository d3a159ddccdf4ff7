/** `requestPause` / `requestStop` by target (slug or path), for another process or a CLI. */
import { workflowError } from "@phasekit/core";
import { requestPauseIn, requestStopIn, type ControlRequest } from "./control-signals.js";
import { resolveRunTarget, type PlanRootsOptions } from "./target.js";

/** Which run to signal, and why. */
export type ControlTargetOptions = PlanRootsOptions & { target: string; reason?: string };

/** Asks the run at `target` to pause at its next step boundary (it ends `paused`, resumable). */
export async function requestPause(options: ControlTargetOptions): Promise<ControlRequest> {
  return requestPauseIn(await existingRunDir(options), options.reason ?? "pause requested");
}

/** Asks the run at `target` to stop at its next step boundary (it ends `cancelled` with the reason). */
export async function requestStop(options: ControlTargetOptions): Promise<ControlRequest> {
  return requestStopIn(await existingRunDir(options), options.reason ?? "stop requested");
}

async function existingRunDir(options: ControlTargetOptions): Promise<string> {
  const r = await resolveRunTarget(options);
  if (r.kind === "found") return r.location.runDir;
  if (r.kind === "new") {
    throw workflowError("control", "NOT_FOUND", `no run folder for target ${JSON.stringify(options.target)} (looked at ${r.location.runDir}).`, {
      value: options.target,
      hint: "pass the slug or path of an existing run",
    });
  }
  throw r.error;
}
