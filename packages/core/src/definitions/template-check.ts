/**
 * The load-time check of a definition's texts: a `{name}` that neither pi-workflows nor phasekit knows in that
 * field stays as written when rendered, which is almost always a typo the author wants to hear about. Reported
 * once per field and name, as a warning (pi-workflows leaves such text as-is, so the workflow still loads).
 */
import type { DefinitionProblem, FieldPath } from "../errors/problems.js";
import { FIELD_VARS, unknownPlaceholders } from "./template.js";
import { problemAt } from "./checks.js";
import { isSubworkflowRef, type WorkflowDefinition } from "./schema.js";

type Field = keyof typeof FIELD_VARS;
type WorkflowField = Exclude<Field, "instructions">;
const WORKFLOW_FIELDS: readonly WorkflowField[] = ["initialMessage", "roleInstruction", "advanceReminder", "blockReasonTemplate", "completionMessage", "cancelledMessage", "notDoneReminder"];

function check(key: string, path: FieldPath, field: Field, text: string | undefined): DefinitionProblem[] {
  if (text === undefined) return [];
  const known = FIELD_VARS[field];
  return unknownPlaceholders(text, known).map(({ name, line }) => {
    const reason = `{${name}} (line ${line} of the text) is not a template variable of ${field}, so it stays as written`;
    const hint = `use one of: ${[...known].map((v) => `{${v}}`).join(", ")}`;
    return { ...problemAt("UNKNOWN_TEMPLATE_VARIABLE", key, path, reason, hint), severity: "warning" as const, line };
  });
}

/** Warnings for the unknown template variables of one parsed workflow, with the line inside each text. */
export function templateProblems(key: string, def: WorkflowDefinition): DefinitionProblem[] {
  const out: DefinitionProblem[] = [];
  for (const field of WORKFLOW_FIELDS) out.push(...check(key, [field], field, def[field]));
  def.phases.forEach((entry, i) => {
    if (!isSubworkflowRef(entry)) out.push(...check(key, ["phases", i, "instructions"], "instructions", entry.instructions));
  });
  return out;
}
