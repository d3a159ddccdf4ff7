/**
 * What a fork is, whatever the store: which of the source's steps it reuses, the workflow state it starts from,
 * its metadata, and its errors. fork-run.ts (plan folders) and fork-store.ts (a store named by URL) copy the
 * steps each their own way; neither re-decides these.
 */
import { workflowError, type WorkflowError } from "@phasekit/core";
import type { JsonValue } from "../io/plain-json.js";
import type { WorkflowMetadata, WorkflowMetadataInput } from "../store/metadata-schema.js";
import type { PlanStore } from "../store/plan-store-port.js";
import { isDispatchKey, pickStepHint, reservedKeyRefusal } from "../engine/reserved-keys.js";
import { WORKFLOW_BASE_KEY } from "./dispatch-record.js";
import type { PlanRootsOptions } from "./target.js";

/** Which run to fork, before which step, and the new run's id (default: a fresh one). */
export type ForkRunOptions = (PlanRootsOptions | { store: PlanStore }) & {
  target: string;
  /** The first step key the fork runs itself (an id, or `id#n`), as `phasekit show` lists it. */
  at: string;
  id?: string;
  /** The tool named as the fork's current tool (default "phasekit fork"). */
  tool?: string;
  now?: () => Date;
  /** Test hook: called after each step copied into the fork (before the rename). */
  onCopied?: (key: string) => void | Promise<void>;
};

/** What forkRun made: the new run, where it came from, and the step keys it reuses. */
export interface ForkRunResult {
  slug: string;
  runDir: string;
  from: { slug: string; at: string };
  copied: string[];
}

/** The event name, in a fork's history and journal, that says where it came from. */
export const FORKED_EVENT = "forked";

/** What the fork needs of a source step's latest record. */
export interface SourceStep {
  key: string;
  status: "started" | "completed" | "failed";
  superseded?: boolean | undefined;
}

/**
 * The steps a fork at `at` reuses: the completed, not superseded ones recorded before it; NOT_FOUND without
 * `at`, INVALID_OPTIONS for one of phasekit's own keys (the rule a rerun's `from` follows, engine/reserved-keys.ts).
 */
export function stepsBefore<S extends SourceStep>(ordered: readonly S[], at: string, source: string): S[] {
  const reserved = reservedKeyRefusal(at, { scope: "fork", action: "fork", field: "at", run: source, keys: ordered.map((e) => e.key) });
  if (reserved !== undefined) throw reserved;
  const i = ordered.findIndex((e) => e.key === at);
  if (i < 0) {
    throw forkError("NOT_FOUND", `run ${source} holds no step "${at}".`, { field: "at", value: at, hint: pickStepHint(source, ordered.map((e) => e.key)) });
  }
  return ordered.slice(0, i).filter((e) => e.status === "completed" && e.superseded !== true);
}

/** The workflow state where the fork starts: the body's starting state, moved by each copied dispatch's outcome. */
export class ForkState {
  value: JsonValue | undefined;

  /** Takes note of a copied step's output, in the order the steps are copied. */
  note(key: string, output: JsonValue): void {
    if (key === WORKFLOW_BASE_KEY) this.value = output;
    else if (isDispatchKey(key) && isOkOutcome(output)) this.value = output.state;
  }
}

/** The fork's first metadata: the source's, without what described its later course (phase, steps, failure). */
export function forkMetadata(source: WorkflowMetadata, slug: string, state: JsonValue | undefined, tool: string, at: string): WorkflowMetadataInput {
  const { schemaVersion: _v, generation: _g, failureReason: _f, currentStepId: _c, lastCompletedStepId: _l, phase: _p, state: _s, ...kept } = source;
  const status = state !== undefined && (state as { status?: unknown }).status === "paused" ? "paused" : "running";
  return { ...kept, slug, status, currentTool: tool, createdAt: at, updatedAt: at, ...(state === undefined ? {} : { state }) };
}

/** A source step whose stored output cannot be read: the fork would not reuse it. */
export function unreadableOutput(key: string, source: string): WorkflowError {
  return forkError("CORRUPT_FILE", `the stored output of step ${key} of run ${source} is missing or damaged: the fork would not reuse it.`, { value: key, hint: `fork at ${key} instead, or run ${source} again to store it` });
}

/** An id that is taken. */
export function taken(slug: string): WorkflowError {
  return forkError("INVALID_OPTIONS", `a run "${slug}" already exists: a fork never writes into another run.`, { field: "id", value: slug, hint: "pick another id, or leave it out for a fresh one" });
}

/** A fork's typed error. */
export function forkError(code: "NOT_FOUND" | "CORRUPT_FILE" | "INVALID_OPTIONS" | "UNSUPPORTED", message: string, details: Record<string, unknown>): WorkflowError {
  return workflowError("fork", code, message, details);
}

function isOkOutcome(v: JsonValue): v is { ok: true; state: JsonValue } {
  return typeof v === "object" && v !== null && !Array.isArray(v) && v["ok"] === true && v["state"] !== undefined;
}
