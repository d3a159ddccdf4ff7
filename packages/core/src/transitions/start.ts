/** `start`: a new run of a workflow, entering references at once when the workflow begins with one. */
import type { WorkflowRegistry } from "../definitions/schema.js";
import { workflowError, type WorkflowError } from "../errors/workflow-error.js";
import { enterReferences, phaseRef } from "./navigation.js";
import { STATE_SCHEMA_VERSION, type PathSegment, type WorkflowState } from "../state/schema.js";
import { clockError } from "./helpers.js";
import type { Happening, TransitionContext } from "./types.js";

/** What a new run needs: which workflow, and the task it works on. The id comes from the adapter. */
export interface StartInput {
  readonly workflowKey: string;
  readonly taskId: string;
  readonly taskDescription: string;
}

/** A new state and its `started` happening, or why the run cannot start (there is no prior state to keep). */
export type StartOutcome =
  | { readonly ok: true; readonly state: WorkflowState; readonly happened: Happening }
  | { readonly ok: false; readonly error: WorkflowError };

/** Starts a run at the first concrete phase of `input.workflowKey`; each sub-workflow entered counts one step. */
export function start(registry: WorkflowRegistry, input: StartInput, ctx: TransitionContext): StartOutcome {
  const clock = clockError("start", ctx);
  if (clock) return { ok: false, error: clock };
  if (typeof input.taskId !== "string" || input.taskId.length === 0) {
    return { ok: false, error: workflowError("start", "INVALID_OPTIONS", "taskId must be a non-empty string.", { field: "taskId", value: input.taskId, hint: "Generate a run id in the adapter." }) };
  }
  if (!registry.workflows.has(input.workflowKey)) {
    const known = [...registry.workflows.keys()].join(", ");
    return {
      ok: false,
      error: workflowError("start", "UNKNOWN_WORKFLOW", `no workflow "${input.workflowKey}" is loaded (known: ${known || "none"}).`, {
        field: "workflowKey",
        value: input.workflowKey,
        hint: "Use one of the known workflow keys, or check the definition file for errors.",
      }),
    };
  }
  const path: PathSegment[] = [{ workflowKey: input.workflowKey, phaseIndex: 0, loops: 0 }];
  const entered = enterReferences("start", registry, path);
  if (!entered.ok) return entered;
  const state: WorkflowState = {
    schemaVersion: STATE_SCHEMA_VERSION,
    workflowKey: input.workflowKey,
    status: "running",
    currentPath: path,
    globalStepCount: entered.entered.length,
    loopCount: 0,
    taskId: input.taskId,
    taskDescription: input.taskDescription,
    startedAt: ctx.now,
    updatedAt: ctx.now,
    generation: 0,
    completionNotified: false,
    cancelPending: false,
  };
  const top = path[path.length - 1] as PathSegment;
  return { ok: true, state, happened: { type: "started", workflowKey: input.workflowKey, to: phaseRef(top.workflowKey, entered.phase, path.length), entered: entered.entered } };
}
