/** The shipped JSON Schemas are exactly what the zod schemas generate today (so an editor never sees a stale one). */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { WorkflowDefinitionSchema, PhaseDefinitionSchema } from "@phasekit/core";
import { generateJsonSchemas } from "../../src/definitions/json-schemas.js";

const SHIPPED = new URL("../../schemas/", import.meta.url);

describe("shipped JSON Schemas", () => {
  it("equal a fresh generation, file for file", () => {
    const fresh = generateJsonSchemas();
    expect(readdirSync(SHIPPED).sort()).toEqual(Object.keys(fresh).sort());
    for (const [file, text] of Object.entries(fresh)) expect(readFileSync(new URL(file, SHIPPED), "utf8"), file).toBe(text);
  });

  it("describe every field of the zod schemas, pi's phase entries and show: workflows", () => {
    const wf = JSON.parse(generateJsonSchemas()["workflow-definition.schema.json"] as string) as { properties: Record<string, unknown>; required: string[]; additionalProperties: boolean };
    expect(Object.keys(wf.properties).sort()).toEqual(Object.keys(WorkflowDefinitionSchema.shape).sort());
    expect(wf.required.sort()).toEqual(["name", "phases"]);
    expect(wf.additionalProperties).toBe(false);
    expect(JSON.stringify(wf.properties["phases"])).toContain('"type":"string"');
    expect(JSON.stringify(wf.properties["show"])).toContain('"workflows"');
    const fm = JSON.parse(generateJsonSchemas()["phase-front-matter.schema.json"] as string) as { properties: Record<string, unknown> };
    expect(Object.keys(fm.properties).sort()).toEqual(Object.keys(PhaseDefinitionSchema.shape).filter((k) => k !== "instructions").sort());
  });
});
