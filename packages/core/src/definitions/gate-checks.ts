/**
 * The checks of a parsed workflow's run controls that zod cannot make alone: where a gate's "no" routes to (a
 * concrete phase of the same workflow: routing never leaves its scope), a routing field without the gate it
 * answers, and an approval schema that is not a JSON Schema phasekit can validate payloads with.
 */
import { z } from "zod";
import { describeValue, type DefinitionProblem } from "../errors/problems.js";
import { problemAt } from "./checks.js";
import { isSubworkflowRef, type WorkflowDefinition } from "./schema.js";

/** The payload validator of an approval schema, or why there is none (one home for compile and the adapters). */
export function approvalValidator(schema: unknown): { ok: true; schema: z.ZodType } | { ok: false; reason: string } {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return { ok: false, reason: `expected a JSON Schema object, got ${describeValue(schema)}` };
  try {
    return { ok: true, schema: z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]) };
  } catch (error) {
    return { ok: false, reason: `not a usable JSON Schema (${error instanceof Error ? error.message.slice(0, 160) : "unreadable"})` };
  }
}

/** Problems of the gates of every phase of `def` (workflow `key`). */
export function gateProblems(key: string, def: WorkflowDefinition): DefinitionProblem[] {
  const problems: DefinitionProblem[] = [];
  const ids = def.phases.flatMap((p) => (isSubworkflowRef(p) ? [] : [p.id]));
  const known = `the phases of this workflow: ${ids.map((id) => JSON.stringify(id)).join(", ")}`;
  def.phases.forEach((phase, index) => {
    if (isSubworkflowRef(phase) || phase.gates === undefined) return;
    const gates = phase.gates;
    const at = ["phases", index, "gates"] as const;
    for (const [field, gate] of [["onFail", "verify"], ["onReject", "approve"]] as const) {
      const target = gates[field];
      if (target === undefined) continue;
      if (!ids.includes(target)) {
        const reason = `routes to phase ${describeValue(target)}, which is not a phase of workflow ${describeValue(key)}`;
        problems.push(problemAt("UNKNOWN_PHASE", key, [...at, field], reason, `use one of ${known} (routing stays in its workflow)`));
      }
      if (gates[gate] === undefined) {
        const reason = `${field} is set but the phase has no ${gate} gate, so nothing can route there`;
        problems.push(problemAt("INVALID_DEFINITION", key, [...at, field], reason, `add gates.${gate}, or remove ${field}`));
      }
    }
    const schema = gates.approve?.schema;
    if (schema !== undefined) {
      const v = approvalValidator(schema);
      if (!v.ok) problems.push(problemAt("INVALID_DEFINITION", key, [...at, "approve", "schema"], v.reason, "write a JSON Schema (draft 7 or 2020-12), e.g. { \"type\": \"object\" }"));
    }
  });
  return problems;
}
