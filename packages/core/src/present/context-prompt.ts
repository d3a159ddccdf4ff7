/**
 * The hidden context prompt injected before each agent turn: where the run is, what to do, and how to move on.
 * Every definition text is rendered once with PROMPT_VARS; values are never expanded a second time.
 */
import { breadcrumbPath, pickText, promptVars, type PromptExtras } from "./prompt-vars.js";
import type { ActiveWorkflow } from "../transitions/resolve-active.js";
import { PROMPT_VARS, renderTemplate } from "../definitions/template.js";
import { DEFAULT_ADVANCE_REMINDER, DEFAULT_LAST_PHASE_REMINDER, DEFAULT_ROLE_INSTRUCTION } from "./text.js";
import { LAST_PHASE_NOTE } from "./step-result.js";
import type { PhaseRef } from "../transitions/types.js";

/** The full context prompt for the current phase of a resolved run. */
export function contextPrompt(active: ActiveWorkflow, extras?: PromptExtras): string {
  const vars = promptVars(active, extras);
  const render = (text: string): string => renderTemplate(text, vars, PROMPT_VARS);
  const { state, phase } = active;
  const sections = [
    `[Workflow path: ${breadcrumbPath(active)}]`,
    render(pickText(active, "roleInstruction") ?? DEFAULT_ROLE_INSTRUCTION),
    [`Task: ${state.taskDescription}`, `Task ID: ${state.taskId}`].join("\n"),
    [`Current phase: ${label(phase.emoji, phase.name)}`, progressLine(active), neighboursLine(active)].join("\n"),
  ];
  const instructions = render(phase.instructions).trim();
  if (instructions !== "") sections.push(`Instructions:\n${instructions}`);
  const profiles = profilesSection(active);
  if (profiles !== "") sections.push(profiles);
  // The default reminder speaks of "the next phase": on the last one it says what really follows.
  const fallback = active.nextPhase === null ? DEFAULT_LAST_PHASE_REMINDER : DEFAULT_ADVANCE_REMINDER;
  sections.push(render(pickText(active, "advanceReminder") ?? fallback));
  return sections.join("\n\n");
}

/** `Progress: phase 1/2 of Code Review (in Release Pipeline 2/3) · 3 steps so far`, counted per level. */
export function progressLine(active: ActiveWorkflow): string {
  const crumbs = active.breadcrumb;
  const inner = crumbs[crumbs.length - 1];
  const steps = `${active.state.globalStepCount} step(s) so far`;
  if (inner === undefined) return `Progress: ${steps}`;
  const here = `phase ${inner.index + 1}/${inner.total}`;
  if (crumbs.length === 1) return `Progress: ${here} · ${steps}`;
  const outer = crumbs.slice(0, -1).map((c) => `${c.workflowName} ${c.index + 1}/${c.total}`);
  return `Progress: ${here} of ${inner.workflowName} (in ${outer.join(" > ")}) · ${steps}`;
}

function neighboursLine(active: ActiveWorkflow): string {
  const prev = active.previousPhase === null ? "none (this is the first phase)" : refLabel(active.previousPhase);
  const next = active.nextPhase === null ? `none (${LAST_PHASE_NOTE})` : refLabel(active.nextPhase);
  return `Previous phase: ${prev} · Next phase: ${next}`;
}

function profilesSection(active: ActiveWorkflow): string {
  const parts: string[] = [];
  const forPhase = active.phase.availableProfiles ?? [];
  if (forPhase.length > 0) parts.push(`Profiles for this phase: ${forPhase.join(", ")}`);
  const all = active.scope.profiles.map((p) => (p.description === "" ? `- ${p.name}` : `- ${p.name}: ${p.description}`));
  if (all.length > 0) parts.push(["Workflow profiles:", ...all].join("\n"));
  return parts.join("\n");
}

function refLabel(ref: PhaseRef): string {
  return label(ref.emoji, ref.phaseName);
}

function label(emoji: string, name: string): string {
  return emoji === "" ? name : `${emoji} ${name}`;
}
