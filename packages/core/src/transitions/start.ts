/**
 * `start`: a new run of a workflow, entering references at once when the workflow begins with one. Also the
 * first event of a journal (`reduce(registry, null, { type: "start", … }, ctx)`), so a journal replays from
 * nothing. The run records the fingerprint of every workflow it can reach, for `checkDefinitions`.
 */
import type { WorkflowRegistry } from "../definitions/registry.js";
import { refusal, type Refusal } from "../errors/refusal.js";
import { STATE_SCHEMA_VERSION, type PathSegment, type WorkflowState } from "../state/schema.js";
import { makeState } from "./apply.js";
import { argumentError, optionError } from "./arguments.js";
import { enterReferences, phaseRef, segment } from "./navigation.js";
import type { RefusalCode, StartInput, TransitionContext, TransitionOutcome } from "./types.js";

const SCOPE = "start";

/** What `start` itself can refuse: ALREADY_STARTED belongs to a start event on a run (reduce), never to start(). */
export type StartCode = Exclude<RefusalCode<"start">, "ALREADY_STARTED">;

/** Starts a run at the first concrete phase of `input.workflowKey`; each sub-workflow entered counts one step. */
export function start(registry: WorkflowRegistry, input: StartInput, ctx: TransitionContext): TransitionOutcome<StartCode> {
  const bad = argumentError(SCOPE, registry, ctx);
  if (bad !== undefined) return { ok: false, error: bad };
  const badInput = inputError(input);
  if (badInput !== undefined) return { ok: false, error: badInput };
  if (!registry.workflows.has(input.workflowKey)) {
    const known = [...registry.workflows.keys()].join(", ");
    const error = refusal(SCOPE, "UNKNOWN_WORKFLOW", `no workflow "${input.workflowKey}" is loaded (known: ${known || "none"}).`, {
      field: "workflowKey",
      value: input.workflowKey,
      hint: "Use one of the known workflow keys, or check the definition file for errors.",
    });
    return { ok: false, error };
  }
  const path: PathSegment[] = [segment(input.workflowKey, 0, 0)];
  const entered = enterReferences(SCOPE, registry, path);
  if (!entered.ok) return entered;
  const base = {
    schemaVersion: STATE_SCHEMA_VERSION,
    workflowKey: input.workflowKey,
    taskId: input.taskId,
    taskDescription: input.taskDescription,
    startedAt: ctx.now,
  };
  const state: WorkflowState = makeState(base, {
    status: "running",
    failureReason: undefined,
    currentPath: path,
    globalStepCount: entered.entered.length,
    loopCount: 0,
    updatedAt: ctx.now,
    finishedAt: undefined,
    generation: 0,
    completionNotified: false,
    cancelPending: false,
    definitions: reachableFingerprints(registry, input.workflowKey),
  });
  const top = path[path.length - 1] as PathSegment;
  return { ok: true, state, happened: { type: "started", workflowKey: input.workflowKey, to: phaseRef(top.workflowKey, entered.phase, path.length), entered: entered.entered } };
}

/** INVALID_OPTIONS naming the first field of `input` that is not a string of the right kind. */
function inputError(input: unknown): Refusal<"INVALID_OPTIONS"> | undefined {
  const hint = "Call start(registry, { workflowKey, taskId, taskDescription }, ctx); the adapter makes the run id.";
  if (typeof input !== "object" || input === null) return optionError(SCOPE, "input", "must be { workflowKey, taskId, taskDescription }", input, hint);
  const { workflowKey, taskId, taskDescription } = input as Partial<Record<keyof StartInput, unknown>>;
  if (typeof workflowKey !== "string") return optionError(SCOPE, "workflowKey", "must be a string", workflowKey, hint);
  if (typeof taskId !== "string" || taskId === "") return optionError(SCOPE, "taskId", "must be a non-empty string", taskId, hint);
  if (typeof taskDescription !== "string") return optionError(SCOPE, "taskDescription", "must be a string", taskDescription, hint);
  return undefined;
}

/** The fingerprints of `root` and every workflow it reaches through references, keys sorted. */
export function reachableFingerprints(registry: WorkflowRegistry, root: string): Readonly<Record<string, string>> {
  const seen = new Set<string>([root]);
  const queue = [root];
  for (let head = 0; head < queue.length; head += 1) {
    for (const entry of registry.workflows.get(queue[head] as string)?.phases ?? []) {
      if ("subworkflow" in entry && !seen.has(entry.subworkflow)) {
        seen.add(entry.subworkflow);
        queue.push(entry.subworkflow);
      }
    }
  }
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const key of [...seen].sort()) out[key] = registry.fingerprints.get(key) ?? "";
  return out;
}
