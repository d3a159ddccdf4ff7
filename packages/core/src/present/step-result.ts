/**
 * The first line of a `workflow_step` result: what the move did and what comes next, in words a model acts on.
 * Models stop on "done": so "DONE", "complete" and "finished" (about the workflow) appear only in the line for a
 * run that completed. Entering the last phase says what to do there, never "(then DONE)".
 */
import type { Happening, PhaseRef } from "../transitions/types.js";
import { WORKFLOW_STEP_TOOL } from "./text.js";

/** What to do on the last phase, where a next phase would be named. */
export const LAST_PHASE_NOTE = `last phase: when this phase is finished, call ${WORKFLOW_STEP_TOOL} next`;

/** `🔍 Review`, or the bare name without an emoji. */
export function phaseLabel(emoji: string, name: string): string {
  return emoji === "" ? name : `${emoji} ${name}`;
}

/** The verb of a move that lands on a phase. */
function verbOf(type: Happening["type"]): string {
  if (type === "looped") return "Looped back";
  if (type === "exited-subworkflow") return "Left sub-workflow";
  if (type === "entered-subworkflow") return "Entered sub-workflow";
  if (type === "restarted-scope") return "Restarted scope";
  if (type === "carried") return "Moved to the new definitions";
  return "Advanced";
}

/**
 * The result line for a move: `from` is the phase left (its name), `to` the phase now current and `next` the one
 * after it (null on the last phase); `workflowName` names the run's workflow for the end lines.
 */
export function stepResultLine(happened: Happening, from: string, to: PhaseRef | null, next: PhaseRef | null, workflowName: string): string {
  switch (happened.type) {
    case "completed":
      return `✓ ${from} → DONE. All phases of ${workflowName} are complete; stop here.`;
    case "cancelled":
      return `Workflow cancelled. Stop working on it.`;
    case "cancel-armed":
      return `⚠️ Confirm cancellation: call ${WORKFLOW_STEP_TOOL} with action='cancel' again. Any other action keeps the workflow.`;
    case "routed": {
      const why = happened.on === "fail" ? "its verify gate failed" : "its approval was rejected";
      const after = next === null ? LAST_PHASE_NOTE : `then ${phaseLabel(next.emoji, next.phaseName)}`;
      return `↩ ${from} → ${phaseLabel(happened.to.emoji, happened.to.phaseName)}: ${why}, so the workflow sends the run back (${after})`;
    }
    default: {
      if (to === null) return `✓ ${from} → ?`;
      const after = next === null ? LAST_PHASE_NOTE : `then ${phaseLabel(next.emoji, next.phaseName)}`;
      return `✓ ${verbOf(happened.type)}: ${from} → ${phaseLabel(to.emoji, to.phaseName)} (${after})`;
    }
  }
}
