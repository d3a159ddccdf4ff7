/**
 * The fs store's control requests: the same request files beside workflow.json as `requestPauseIn` /
 * `readControlRequest` / `clearControlRequest` (control-signals.ts), behind the `PlanStore` control methods. A
 * request may be filed by any process (the holder is busy running); the rules for filing one are the port's:
 * the run must exist and not be finished, and a pause needs a live holder.
 */
import { settle } from "./settle.js";
import path from "node:path";
import { workflowError, type WorkflowError } from "@phasekit/core";
import { nodeFs, type FsPort } from "../io/fs-port.js";
import { judgeLiveness } from "../lock/liveness.js";
import { anyRequestFile, approvalMismatch, clearControlRequest, type ApprovalDecision, newControlRequest, readControlRequest, readControlSignal, withdrawRefusal, writeControlRequest, type ControlRequest, type ControlSignal } from "./control-signals.js";
import type { ReadMetadataResult } from "./metadata.js";
import { FINISHED_STATUSES, finishedError } from "./run-status.js";

type Outcome<T> = ({ ok: true } & T) | { ok: false; error: WorkflowError };

/** What a caller passes when filing a request. */
export interface ControlRequestInput {
  /** Why (recorded with the request; default "pause requested" / "stop requested"). */
  reason?: string;
  /** Wall-clock time of the request (ISO 8601); the current time by default. */
  now?: () => string;
  /** The decision of an approve request (required for one, refused on the others). */
  approval?: ApprovalDecision;
}

/** The control methods of a `PlanStore` (see plan-store.ts). */
export interface StoreControl {
  requestControl(slug: string, signal: ControlSignal, request?: ControlRequestInput): Promise<Outcome<{ request: ControlRequest }>>;
  readControl(slug: string, signal?: ControlSignal): Promise<Outcome<{ request: ControlRequest | null }>>;
  clearControl(slug: string, request: ControlRequest): Promise<Outcome<{ cleared: boolean }>>;
  /**
   * Takes back a pending pause if it is still that very request (withdrawn: false when it is gone: honoured, or
   * replaced by a newer one). A filer's act, as filing is: any process may, whoever holds the run (clearing is
   * the holder's). Only a pause (INVALID_OPTIONS for a stop or an approval: see withdrawRefusal).
   */
  withdrawControl(slug: string, request: ControlRequest): Promise<Outcome<{ withdrawn: boolean }>>;
}

/** The control methods over the run folders that `dirOf` names (validated, not created). */
export function createFsControl(
  fs: FsPort,
  dirOf: (slug: string) => Promise<string>,
  readMetadata: (slug: string) => Promise<ReadMetadataResult>,
  /** The run folder's plain path (no checks), for the per-step "no request pending" answer; null when unknown. */
  plainDirOf: (slug: string) => string | null = () => null,
): StoreControl {
  return {
    requestControl: (slug, signal, input = {}) =>
      settle(async () => {
        const runDir = await dirOf(slug);
        const file = path.join(runDir, "workflow.json"); // named in errors only
        // The run's status as readers see it (the run log's latest generation, not a stale file).
        const read = await readMetadata(slug);
        if (!read.ok) return read;
        const refused = await controlRefusal(slug, signal, read.metadata?.status ?? null, file, () => runnerAlive(runDir));
        if (refused !== null) return { ok: false, error: refused };
        const mismatch = approvalMismatch(slug, signal, input.approval);
        if (mismatch !== undefined) return { ok: false, error: mismatch };
        const request = newControlRequest(signal, input.reason ?? `${signal} requested`, input.now, read.metadata?.generation, input.approval);
        await writeControlRequest(runDir, request, { fs });
        return { ok: true, request };
      }),
    readControl: (slug, signal) =>
      settle(async () => {
        // Asked before every step: when no request file exists the answer needs no safe path resolution (which
        // walks every path component); anything present goes through it and the safe read.
        const plain = fs === nodeFs ? plainDirOf(slug) : null;
        if (plain !== null && !anyRequestFile(plain, signal)) return { ok: true, request: null };
        const runDir = await dirOf(slug);
        return signal === undefined ? readControlRequest(runDir, { fs }) : readControlSignal(runDir, signal, { fs });
      }),
    clearControl: (slug, request) =>
      settle(async () => {
        // Whether this very call removed it (not what a read before it saw): a withdrawal racing the holder's take
        // removes it once, and only one of them is told so.
        return { ok: true, cleared: await clearControlRequest(await dirOf(slug), request, { fs }) };
      }),
    withdrawControl: (slug, request) =>
      settle(async () => {
        const refused = withdrawRefusal(slug, request);
        if (refused !== undefined) return { ok: false, error: refused };
        // The request file is anyone's to remove by its content (the holder's clear is the same unlink).
        return { ok: true, withdrawn: await clearControlRequest(await dirOf(slug), request, { fs }) };
      }),
  };
}

/**
 * Why a `signal` request for a run in `status` (null: no run) is refused, or null. Shared by every store so the
 * codes agree: NOT_FOUND, RUN_FINISHED, NOT_RUNNING (a pause left for a crashed run would pause its next resume).
 */
export async function controlRefusal(
  slug: string,
  signal: ControlSignal,
  status: string | null,
  where: string,
  /** True while a process runs the run (the lock's liveness rule, or the store's lease). */
  live: () => Promise<boolean>,
): Promise<WorkflowError | null> {
  if (status === null) {
    return workflowError("control", "NOT_FOUND", `no run ${slug} (looked for ${where}).`, { value: slug, hint: "pass the slug or path of an existing run" });
  }
  if (FINISHED_STATUSES.has(status)) return finishedError(slug, status, `a ${signal} request`, "nothing to do: the run is over");
  if (signal !== "pause") return null;
  if (status === "running" && (await live())) return null;
  const why = status !== "running" ? `it is ${status}` : "no process holds its lock (it crashed or ended)";
  return workflowError("control", "NOT_RUNNING", `run ${slug} cannot be paused: ${why}.`, {
    value: status,
    hint: "a pause applies to a running run; resume the run first, or send stop to end it",
  });
}


// How long a pause waits for a verdict the lock's first look cannot give (a holder on another host whose heartbeat
// looks stale or lies in the future): a live one refreshes within half its stale time; a dead one is known after it.
const PAUSE_WATCH_MS = 60_000;

/** The lock's liveness rule (lock/liveness.ts): a crashed runner is dead by its pid at once, a skewed clock is not. */
async function runnerAlive(runDir: string): Promise<boolean> {
  return (await judgeLiveness(runDir, { watchMs: PAUSE_WATCH_MS })).verdict === "live";
}
