/**
 * `requestPause` / `requestStop` by target (slug or path), for another process or a CLI. The rules live here so
 * every caller applies them: the target must be a run folder inside a plan root with a readable workflow.json; a
 * finished run (completed, cancelled) takes neither request (RUN_FINISHED); a pause needs a run that is running
 * now (status running and a fresh lock), since a pause left for a crashed run would pause its next resume. A stop
 * is accepted for a running, paused or failed run: its next resume ends cancelled.
 */
import { workflowError } from "@phasekit/core";
import { requestPauseIn, requestStopIn, type ControlRequest } from "./control-signals.js";
import { resolveRunTarget, type PlanRootsOptions } from "./target.js";
import { readWorkflowMetadata } from "../store/metadata.js";
import { readLockHolder } from "../lock/holder.js";
import { FINISHED_STATUSES, finishedError } from "./resume-analysis.js";
import path from "node:path";

/** Which run to signal, and why. */
export type ControlTargetOptions = PlanRootsOptions & { target: string; reason?: string };

/** Asks the run at `target` to pause at its next step boundary (it ends `paused`, resumable). */
export async function requestPause(options: ControlTargetOptions): Promise<ControlRequest> {
  return requestPauseIn(await signalableRunDir(options, "pause"), options.reason ?? "pause requested");
}

/** Asks the run at `target` to stop (its in-flight step's signal aborts; it ends `cancelled` with the reason). */
export async function requestStop(options: ControlTargetOptions): Promise<ControlRequest> {
  return requestStopIn(await signalableRunDir(options, "stop"), options.reason ?? "stop requested");
}

async function signalableRunDir(options: ControlTargetOptions, signal: "pause" | "stop"): Promise<string> {
  const r = await resolveRunTarget(options);
  if (r.kind === "ambiguous" || r.kind === "invalid") throw r.error;
  const { runDir, slug } = r.location;
  const read = r.kind === "found" ? await readWorkflowMetadata(path.join(runDir, "workflow.json"), options.fs ? { fs: options.fs } : {}) : null;
  if (read !== null && !read.ok) throw read.error;
  const metadata = read?.metadata ?? null;
  if (metadata === null) {
    throw workflowError("control", "NOT_FOUND", `no run at target ${JSON.stringify(options.target)} (looked for ${path.join(runDir, "workflow.json")}).`, {
      value: options.target,
      hint: "pass the slug or path of an existing run",
    });
  }
  if (FINISHED_STATUSES.has(metadata.status)) {
    throw finishedError(slug, metadata.status, `a ${signal} request`, "nothing to do: the run is over");
  }
  if (signal === "pause") {
    const lock = await readLockHolder(runDir);
    if (metadata.status !== "running" || !lock.held || lock.stale) {
      const why = metadata.status !== "running" ? `it is ${metadata.status}` : "no process holds its lock (it crashed or ended)";
      throw workflowError("control", "NOT_RUNNING", `run ${slug} cannot be paused: ${why}.`, {
        value: metadata.status,
        hint: "a pause applies to a running run; resume the run first, or send stop to end it",
      });
    }
  }
  return runDir;
}
