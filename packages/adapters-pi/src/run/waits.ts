/**
 * Durable waits of a `runWorkflow` body: `ctx.waitForApproval` and `ctx.sleep`. Each wait is two entries of the
 * run's history: its start (when it began, so a resumed run continues the same wait and its deadline does not
 * move) and its end (the outcome, so a replayed body gets it back without waiting again). A person's decision
 * arrives through the store's control requests (`requestApproval`, `phasekit approve`): filed by any process,
 * kept across crashes until the run has recorded it. Pause and stop requests are honoured while waiting.
 */
import { setTimeout as delay } from "node:timers/promises";
import { validateApproval, workflowError } from "@phasekit/core";
import { waitKey, type WaitKey, type WaitKind } from "../engine/wait-keys.js";
import { validateStepId } from "../io/plan-paths.js";
import type { CheckpointStore } from "../engine/checkpoint-port.js";
import type { ControlRequest } from "../store/control-signals.js";
import type { PlanStore } from "../store/plan-store.js";
import type { Reporter } from "./reporter.js";

/** Options of `ctx.waitForApproval`. */
export interface WaitForApprovalOptions {
  /** A JSON Schema the payload must match (a payload that does not is refused, and the wait goes on). */
  schema?: Record<string, unknown> | undefined;
  /** How long to wait, counted from the first time this wait began (across resumes); no limit when absent. */
  timeoutMs?: number | undefined;
  /** What the person is asked (recorded with the wait, shown by `phasekit show`). */
  prompt?: string | undefined;
}

/** How a wait for approval ended: a typed outcome, never a throw (a pause or stop request still throws). */
export type ApprovalOutcome =
  | { status: "approved"; data: unknown }
  | { status: "rejected"; reason: string; data?: unknown }
  | { status: "timed-out"; waitedMs: number };

/** What the waits need from the run. */
export interface WaitDeps {
  slug: string;
  store: PlanStore;
  checkpoints: CheckpointStore;
  reporter: Reporter;
  signal: AbortSignal;
  now(): number;
  /** Throws RUN_PAUSED / RUN_STOPPED / LOCK_LOST as at a step boundary. */
  checkControl(): Promise<void>;
  journal(event: string, data?: unknown): Promise<void>;
  /** How often a wait looks for a decision or a control request (ms). */
  pollMs: number;
}

interface Recorded {
  status: "approved" | "rejected" | "timed-out";
  data?: unknown;
  reason?: string;
  waitedMs?: number;
  /** The request that decided it, to clear it on a replay if a crash left it behind. */
  request?: ControlRequest;
}

/** The durable waits of one body invocation (occurrences are counted per invocation, as steps are). */
export function createWaits(deps: WaitDeps): {
  waitForApproval(name: string, options?: WaitForApprovalOptions): Promise<ApprovalOutcome>;
  sleep(ms: number): Promise<void>;
} {
  const seen = new Map<string, number>();
  /** The nth wait of `kind` (and `name`): its end key, and the wait itself (for its start and due keys). */
  const occurrence = (kind: WaitKind, name = ""): { key: string; wait: Omit<WaitKey, "role"> } => {
    const base = `${kind}:${name}`;
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return { key: waitKey({ kind, role: "end", name, n }), wait: { kind, name, n } };
  };
  // The start also records when the wait is due (null: only a decision ends it), so `phasekit resume-due` can
  // tell from the history alone which stopped runs have a wait that has ended. The input stays as it was. A
  // resumed body may ask another length: the wait is due at the recorded start + the length asked now, and a
  // `-due` entry records that (its latest record is the one read), so the wait and resume-due agree.
  const began = async (wait: Omit<WaitKey, "role">, input: unknown, lengthMs: number | undefined): Promise<{ start: number; deadline: number }> => {
    const r = await deps.checkpoints.step(waitKey({ ...wait, role: "start" }), input, () => {
      const at = deps.now();
      return { at, dueAt: dueAtOf(at, lengthMs) };
    });
    const start = (r.output as { at: number }).at;
    const dueAt = dueAtOf(start, lengthMs);
    if (r.reused) await deps.checkpoints.step(waitKey({ ...wait, role: "due" }), { start, lengthMs: lengthMs ?? null }, () => ({ dueAt }));
    return { start, deadline: dueAt ?? Number.POSITIVE_INFINITY };
  };
  /** Waits until `deadline` or `ready()` answers, looking every pollMs; control requests first each time. */
  const until = async <T>(deadline: number, ready: () => Promise<T | undefined>): Promise<T | undefined> => {
    for (;;) {
      await deps.checkControl();
      const got = await ready();
      if (got !== undefined) return got;
      const left = deadline - deps.now();
      if (left <= 0) return undefined;
      await delay(Math.min(left, deps.pollMs), undefined, { signal: deps.signal }).catch(() => undefined);
    }
  };

  return {
    async waitForApproval(name, options = {}) {
      const id = validateStepId(name);
      if (!id.ok) throw id.error;
      checkTimeout(options.timeoutMs, "timeoutMs");
      const { key, wait } = occurrence("approval", name);
      const input = { name, schema: options.schema ?? null, timeoutMs: options.timeoutMs ?? null, prompt: options.prompt ?? null };
      // The start is keyed by the name alone: a resumed body that passes another timeout keeps the wait's start.
      const { start, deadline } = await began(wait, { name }, options.timeoutMs);
      const r = await deps.checkpoints.step(key, input, async (): Promise<Recorded> => {
        // The schema travels with the announcement: the inspector builds its payload form from it.
        await deps.journal("waiting", { for: "approval", name, ...(options.prompt === undefined ? {} : { prompt: options.prompt }), ...(options.schema === undefined ? {} : { schema: options.schema }) });
        const decided = await until(deadline, () => decision(deps, name, options.schema));
        return decided ?? { status: "timed-out", waitedMs: deps.now() - start };
      });
      const rec = r.output as Recorded;
      // The decision is in the history now: its request has done its work (a replay clears one a crash left).
      if (rec.request !== undefined) await deps.store.clearControl(deps.slug, rec.request);
      if (!r.reused) await deps.journal("approval", { name, status: rec.status });
      if (rec.status === "approved") return { status: "approved", data: rec.data ?? null };
      if (rec.status === "rejected") return { status: "rejected", reason: rec.reason ?? "rejected", ...(rec.data === undefined ? {} : { data: rec.data }) };
      return { status: "timed-out", waitedMs: rec.waitedMs ?? 0 };
    },
    async sleep(ms) {
      checkTimeout(ms, "ms");
      const { key, wait } = occurrence("sleep");
      // Keyed by occurrence alone: a resumed body continues the same sleep even if it asks for another length.
      const { deadline } = await began(wait, null, ms);
      await deps.checkpoints.step(key, { ms }, async () => {
        await until(deadline, async () => undefined);
        return { wokeAt: deps.now() };
      });
    },
  };
}

/** When a wait that began at `start` and asks `lengthMs` is due (null: only a decision ends it). */
function dueAtOf(start: number, lengthMs: number | undefined): number | null {
  return lengthMs === undefined ? null : start + lengthMs;
}

/** The pending decision for wait `name`, recorded form; an invalid payload is refused (request cleared, reported). */
async function decision(deps: WaitDeps, name: string, schema: Record<string, unknown> | undefined): Promise<Recorded | undefined> {
  const r = await deps.store.readControl(deps.slug, "approve");
  if (!r.ok) throw r.error;
  const request = r.request;
  const approval = request?.approval;
  if (request === null || approval === undefined) return undefined;
  if (approval.name !== undefined && approval.name !== name) return undefined;
  if (approval.decision === "reject") return { status: "rejected", reason: request.reason, ...(approval.data === undefined ? {} : { data: approval.data }), request };
  const valid = validateApproval(schema, approval.data ?? null);
  if (valid.ok) return { status: "approved", data: valid.data, request };
  // A payload the wait cannot take: say why where the person looks, drop it, and keep waiting for a good one.
  deps.reporter.warning(`approval ${name}: ${valid.error.message}`, { id: `approval:${name}` });
  await deps.journal("approval-refused", { name, reason: valid.error.message });
  await deps.store.clearControl(deps.slug, request);
  return undefined;
}

function checkTimeout(value: unknown, field: string): void {
  if (value === undefined || (typeof value === "number" && Number.isFinite(value) && value >= 0)) return;
  throw workflowError("run", "INVALID_OPTIONS", `${field} must be a number of milliseconds ≥ 0, got ${String(value)}.`, { field, hint: "pass e.g. { timeoutMs: 60_000 }" });
}
