/**
 * Pause and stop requests from another process. They are durable files beside workflow.json (written atomically,
 * without the plan lock, since the runner holds it), and the running body sees them at its next step boundary.
 * A stop outranks a pause: a later pause request never downgrades a pending stop.
 */
import path from "node:path";
import os from "node:os";
import { z } from "zod";
import { workflowError, type WorkflowError } from "@phasekit/core";
import { writeFileAtomic } from "./atomic-write.js";
import { fsErrorCode, nodeFs, type FsPort } from "./fs-port.js";

/** File name of the control request inside a run folder. */
export const CONTROL_FILE = "control.json";

const ControlRequestSchema = z.strictObject({
  schemaVersion: z.literal(1),
  signal: z.enum(["pause", "stop"]),
  reason: z.string().max(2_000),
  requestedAt: z.string(),
  requestedBy: z.strictObject({ pid: z.number().int(), host: z.string() }),
});

/** A pending request to pause or stop a run. */
export type ControlRequest = z.infer<typeof ControlRequestSchema>;
/** What a runner should do at a step boundary. */
export type ControlSignal = ControlRequest["signal"];

/** Options shared by the control-signal functions. */
export interface ControlOptions {
  fs?: FsPort;
  /** Wall-clock time of the request (ISO 8601); the current time by default. */
  now?: () => string;
}

/** Writes a durable pause request for the run in `runDir` (kept if a stop is already pending). */
export function requestPauseIn(runDir: string, reason = "pause requested", options: ControlOptions = {}): Promise<ControlRequest> {
  return writeRequest(runDir, "pause", reason, options);
}

/** Writes a durable stop request for the run in `runDir`; it replaces a pending pause. */
export function requestStopIn(runDir: string, reason = "stop requested", options: ControlOptions = {}): Promise<ControlRequest> {
  return writeRequest(runDir, "stop", reason, options);
}

/** The pending request of the run in `runDir`, null when none; a malformed file is a CORRUPT_FILE error (kept). */
export async function readControlRequest(
  runDir: string,
  options: { fs?: FsPort } = {},
): Promise<{ ok: true; request: ControlRequest | null } | { ok: false; error: WorkflowError }> {
  const fs = options.fs ?? nodeFs;
  const file = path.join(runDir, CONTROL_FILE);
  let text: string;
  try {
    text = (await fs.readFile(file)).toString("utf8");
  } catch (error) {
    if (fsErrorCode(error) === "ENOENT") return { ok: true, request: null };
    return { ok: false, error: workflowError("control", "READ_FAILED", `cannot read ${file}: ${String(error)}`, { file }, error) };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: corrupt(file, `it is not JSON (${(error as Error).message})`) };
  }
  const parsed = ControlRequestSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, error: corrupt(file, `${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}`) };
  }
  return { ok: true, request: parsed.data };
}

/** Removes the pending request once the runner has honoured it. Missing is fine. */
export async function clearControlRequest(runDir: string, options: { fs?: FsPort } = {}): Promise<void> {
  const fs = options.fs ?? nodeFs;
  try {
    await fs.unlink(path.join(runDir, CONTROL_FILE));
  } catch (error) {
    if (fsErrorCode(error) !== "ENOENT") throw error;
  }
}

async function writeRequest(runDir: string, signal: ControlSignal, reason: string, options: ControlOptions): Promise<ControlRequest> {
  const fs = options.fs ?? nodeFs;
  if (signal === "pause") {
    const current = await readControlRequest(runDir, { fs });
    if (current.ok && current.request?.signal === "stop") return current.request;
  }
  const request: ControlRequest = {
    schemaVersion: 1,
    signal,
    reason: reason.slice(0, 2_000),
    requestedAt: options.now?.() ?? new Date().toISOString(),
    requestedBy: { pid: process.pid, host: os.hostname() },
  };
  await writeFileAtomic(path.join(runDir, CONTROL_FILE), `${JSON.stringify(request, null, 2)}\n`, { fs });
  return request;
}

function corrupt(file: string, why: string): WorkflowError {
  return workflowError("control", "CORRUPT_FILE", `${file} is not a valid control request: ${why}.`, {
    file,
    hint: "delete the file to drop the request, or write a new one with requestPause/requestStop",
  });
}
