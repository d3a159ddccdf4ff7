/**
 * JSON Schemas of the two files a workflow author writes in pi-workflows' folder format, generated from core's
 * zod schemas so they can never drift: `workflow.yaml` (phase entries are file names or `{ subworkflow }`) and a
 * phase file's front matter (the phase without its instructions, which are the Markdown body). The package
 * ships them in `schemas/` for editors' YAML support; a test checks the shipped files equal a fresh generation.
 */
import { z } from "zod";
import { PhaseDefinitionSchema, SubworkflowRefSchema, WorkflowDefinitionSchema } from "@phasekit/core";

const BASE = "https://phasekit.dev/schemas/";

/** `workflow.yaml` as pi-workflows 1.0.0 writes it. */
export const workflowFileSchema = WorkflowDefinitionSchema.extend({
  phases: z.array(z.union([z.string().min(1).describe("a phase Markdown file, relative to this folder"), SubworkflowRefSchema])).describe("the phases in order"),
  show: z.union([z.boolean(), z.literal("workflows")]).optional().describe('false or "workflows": usable only inside other workflows'),
});

/** A phase file's front matter. */
export const phaseFrontMatterSchema = PhaseDefinitionSchema.omit({ instructions: true });

/** The file names and texts of the generated schemas (2-space JSON, trailing newline). */
export function generateJsonSchemas(): Record<string, string> {
  const out: Record<string, string> = {};
  const gen = (file: string, title: string, schema: z.ZodType) => {
    const json = z.toJSONSchema(schema, { target: "draft-7", io: "input", unrepresentable: "any" });
    out[file] = `${JSON.stringify({ ...json, $id: `${BASE}${file}`, title }, null, 2)}\n`;
  };
  gen("workflow-definition.schema.json", "phasekit workflow definition (workflow.yaml)", workflowFileSchema);
  gen("phase-front-matter.schema.json", "phasekit phase file front matter", phaseFrontMatterSchema);
  return out;
}
