/**
 * Pause and stop requests from another process, as the fs store keeps them (other stores keep the same
 * `ControlRequest` records their own way, behind `PlanStore.requestControl`). They are durable files beside workflow.json (written atomically,
 * without the plan lock, since the runner holds it), and the running body sees them at its next step boundary.
 * Each signal has its own file, so a pause request can never overwrite a stop (no read-then-write race), and
 * the runner reads the stop first: a stop outranks a pause.
 */
import path from "node:path";
import os from "node:os";
import { lstatSync } from "node:fs";
import { z } from "zod";
import { workflowError, type WorkflowError } from "@phasekit/core";
import { tempPathFor, writeFileAtomic } from "../io/atomic-write.js";
import { fsErrorCode, nodeFs, type FsPort } from "../io/fs-port.js";
import { MAX_FILE_BYTES, readRegular } from "../io/safe-open.js";
import { isWorkflowError } from "@phasekit/core";
import { storableText } from "../engine/step-error.js";
import { schemaIssue } from "../engine/record-issue.js";

/** The most UTF-16 units of a control request's reason. */
const MAX_REASON_CHARS = 2_000;

/** File name of each signal's request inside a run folder. */
export const CONTROL_FILES = { stop: "stop-request.json", pause: "pause-request.json", approve: "approve-request.json" } as const;

/** The request file of `signal` in `runDir`. */
export function controlFile(runDir: string, signal: ControlSignal): string {
  return path.join(runDir, CONTROL_FILES[signal]);
}

/**
 * A person's decision for a run that waits (`ctx.waitForApproval`, a phase's approve gate). `name` says which
 * wait it answers (absent: whichever the run waits for); `data` is checked against the wait's schema by the run.
 */
const ApprovalSchema = z.strictObject({
  name: z.string().max(200).optional(),
  decision: z.enum(["approve", "reject"]),
  data: z.unknown().optional(),
});

const ControlRequestSchema = z.strictObject({
  schemaVersion: z.literal(1),
  /** pause and stop are honoured at step boundaries; approve is read only by a run that waits for one. */
  signal: z.enum(["pause", "stop", "approve"]),
  reason: z.string().max(MAX_REASON_CHARS),
  requestedAt: z.string(),
  requestedBy: z.strictObject({ pid: z.number().int(), host: z.string() }),
  /** The run's metadata generation the filer saw: where in the run's history the request was filed. */
  generation: z.number().int().min(0).optional(),
  /** Only on an approve request. */
  approval: ApprovalSchema.optional(),
});

/** The decision an approve request carries. */
export type ApprovalDecision = z.infer<typeof ApprovalSchema>;

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

/** Writes a durable pause request for the run in `runDir` (a pending stop still wins). */
export function requestPauseIn(runDir: string, reason = "pause requested", options: ControlOptions = {}): Promise<ControlRequest> {
  return writeRequest(runDir, "pause", reason, options);
}

/** Writes a durable stop request for the run in `runDir`; it outranks a pending pause. */
export function requestStopIn(runDir: string, reason = "stop requested", options: ControlOptions = {}): Promise<ControlRequest> {
  return writeRequest(runDir, "stop", reason, options);
}

/** The pending request of the run in `runDir` (a stop before a pause), null when none; a malformed file is CORRUPT_FILE (kept). */
export async function readControlRequest(
  runDir: string,
  options: { fs?: FsPort } = {},
): Promise<{ ok: true; request: ControlRequest | null } | { ok: false; error: WorkflowError }> {
  // Checked at every step: with no request pending (the usual case) two synchronous lstat calls answer it; a
  // thread-pool round trip per file cost more than the rest of a reuse hit. Anything present is read safely.
  if ((options.fs === undefined || options.fs === nodeFs) && !anyRequestFile(runDir)) return { ok: true, request: null };
  for (const signal of ["stop", "pause"] as const) {
    const r = await readRequestFile(controlFile(runDir, signal), signal, options.fs ?? nodeFs);
    if (!r.ok || r.request !== null) return r;
  }
  return { ok: true, request: null };
}

/** The pending request of one signal alone, null when none. */
export function readControlSignal(
  runDir: string,
  signal: ControlSignal,
  options: { fs?: FsPort } = {},
): Promise<{ ok: true; request: ControlRequest | null } | { ok: false; error: WorkflowError }> {
  return readRequestFile(controlFile(runDir, signal), signal, options.fs ?? nodeFs);
}

/**
 * A new request of `signal` filed by this process (the reason cut to 2,000 characters), stamped with the run's
 * metadata `generation` the filer saw when the store knows it (see `isSupersededRequest`).
 */
/** The filing rule every store shares: an approve request carries a decision, and only an approve request does. */
export function approvalMismatch(slug: string, signal: ControlSignal, approval: unknown): WorkflowError | undefined {
  if ((signal === "approve") === (approval !== undefined)) return undefined;
  const why = signal === "approve" ? "an approve request needs a decision (approval)" : `a ${signal} request carries no approval`;
  return workflowError("control", "INVALID_OPTIONS", `run ${slug}: ${why}.`, { field: "approval", hint: "use requestApproval() / phasekit approve for decisions" });
}

/**
 * The withdrawal rule every store shares (`PlanStore.withdrawControl`): only a pause is taken back by whoever
 * asks. A stop or an approval, once filed, is the holder's to honour: it has acted on it, or will.
 */
export function withdrawRefusal(slug: string, request: ControlRequest): WorkflowError | undefined {
  if (request.signal === "pause") return undefined;
  return workflowError("control", "INVALID_OPTIONS", `run ${slug}: a ${request.signal} request cannot be withdrawn, only a pause.`, {
    field: "signal",
    value: request.signal,
    hint: "a stop ends the run at its next step; resume it afterwards if that was a mistake",
  });
}

/** A request as every store files it: the reason capped, its time, its filer, and (when given) the generation its filer saw and a decision. */
export function newControlRequest(signal: ControlSignal, reason: string, now?: () => string, generation?: number, approval?: ApprovalDecision): ControlRequest {
  return {
    schemaVersion: 1,
    signal,
    reason: storableText(reason, MAX_REASON_CHARS),
    requestedAt: now?.() ?? new Date().toISOString(),
    requestedBy: { pid: process.pid, host: os.hostname() },
    ...(generation === undefined ? {} : { generation }),
    ...(approval === undefined ? {} : { approval }),
  };
}

/**
 * A request belongs to the run's history from the generation its filer saw. A run that ended (completed or
 * cancelled) at generation `endedGeneration` supersedes every request filed at or before it: a pause or stop that
 * arrived during the last step ends with that run and never touches a run re-entered later. A request without a
 * generation (an older file, a store that does not stamp one) cannot be placed and is never judged superseded;
 * the ending run clears the requests it leaves behind for that case.
 */
export function isSupersededRequest(request: ControlRequest, endedGeneration: number | null): boolean {
  return endedGeneration !== null && request.generation !== undefined && request.generation <= endedGeneration;
}

/** Checks a stored request (from any backend) against the request schema; `where` names it in the error. */
export function parseControlRequest(raw: unknown, signal: ControlSignal, where: string): { ok: true; request: ControlRequest } | { ok: false; error: WorkflowError } {
  const parsed = ControlRequestSchema.safeParse(raw);
  if (!parsed.success) {
    return { ok: false, error: corrupt(where, schemaIssue(parsed.error, raw).text) };
  }
  if (parsed.data.signal !== signal) return { ok: false, error: corrupt(where, `it holds a ${parsed.data.signal} request`) };
  if ((signal === "approve") !== (parsed.data.approval !== undefined)) return { ok: false, error: corrupt(where, signal === "approve" ? "an approve request has no approval" : "only an approve request carries an approval") };
  return { ok: true, request: parsed.data };
}

/** Writes `request` as the run's request file of its signal (atomically; replaces an older one). */
export async function writeControlRequest(runDir: string, request: ControlRequest, options: { fs?: FsPort } = {}): Promise<void> {
  await writeFileAtomic(controlFile(runDir, request.signal), `${JSON.stringify(request, null, 2)}\n`, { fs: options.fs ?? nodeFs });
}

/**
 * Removes `request` if the file still holds that very request; true when this call removed it. A newer request
 * written meanwhile (by any process) stays for the next run to see, and of two removals racing (the holder taking
 * a pause, its filer withdrawing it) exactly one answers true. The file is first renamed aside to a name of this
 * process (atomic: what it holds then can no longer be replaced, and no other removal can take it), checked
 * there, and only then unlinked; a newer request found aside (written between the read and the rename) goes back
 * under its name unless an even newer one is there already.
 */
export async function clearControlRequest(runDir: string, request: ControlRequest, options: { fs?: FsPort } = {}): Promise<boolean> {
  const fs = options.fs ?? nodeFs;
  const file = controlFile(runDir, request.signal);
  // Only the very request is ever moved: another one is left in place, never renamed aside where readers miss it.
  const current = await readRequestFile(file, request.signal, fs);
  if (!current.ok || current.request === null || !sameRequest(current.request, request)) return false;
  // A temp-file name: if this process dies holding it, the cleanup of leftovers removes it as any other.
  const aside = tempPathFor(file);
  try {
    await fs.rename(file, aside);
  } catch (error) {
    if (fsErrorCode(error) === "ENOENT") return false;
    throw error;
  }
  const held = await readRequestFile(aside, request.signal, fs);
  const mine = held.ok && held.request !== null && sameRequest(held.request, request);
  if (!mine) {
    await fs.link(aside, file).catch((error: unknown) => {
      if (fsErrorCode(error) !== "EEXIST") throw error;
    });
  }
  await fs.unlink(aside);
  return mine;
}

function sameRequest(a: ControlRequest, b: ControlRequest): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * False only when no request file of `signal` (default: either) exists in `runDir`: two synchronous lstat calls.
 * Absence is all it can prove; a file that exists is read through the safe path.
 */
export function anyRequestFile(runDir: string, signal?: ControlSignal): boolean {
  const present = (s: ControlSignal): boolean => lstatSync(controlFile(runDir, s), { throwIfNoEntry: false }) !== undefined;
  return signal === undefined ? present("stop") || present("pause") : present(signal);
}

async function readRequestFile(
  file: string,
  signal: ControlSignal,
  fs: FsPort,
): Promise<{ ok: true; request: ControlRequest | null } | { ok: false; error: WorkflowError }> {
  let text: string;
  try {
    const bytes = await readRegular(fs, file, { maxBytes: MAX_FILE_BYTES.small, scope: "control" });
    if (bytes === null) return { ok: true, request: null };
    text = bytes.toString("utf8");
  } catch (error) {
    if (isWorkflowError(error)) return { ok: false, error };
    return { ok: false, error: workflowError("control", "READ_FAILED", `cannot read ${file}: ${String(error)}`, { file }, error) };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: corrupt(file, `it is not JSON (${(error as Error).message})`) };
  }
  return parseControlRequest(raw, signal, file);
}

async function writeRequest(runDir: string, signal: ControlSignal, reason: string, options: ControlOptions): Promise<ControlRequest> {
  const request = newControlRequest(signal, reason, options.now);
  await writeControlRequest(runDir, request, options.fs ? { fs: options.fs } : {});
  return request;
}

function corrupt(file: string, why: string): WorkflowError {
  return workflowError("control", "CORRUPT_FILE", `${file} is not a valid control request: ${why}.`, {
    file,
    hint: "delete the file to drop the request, or write a new one with requestPause/requestStop",
  });
}
