/** Random valid definition sets for the model tests (shared by the reducer and definition-change models). */
import fc from "fast-check";

/** One generated workflow: its entries, loopability and loop limit. */
export interface WorkflowShape {
  entries: Array<"phase" | number>; // a number: reference to a later workflow, by offset
  loopable: boolean;
  maxLoops: number | undefined;
}

/** A random workflow shape. */
export const workflowShape = fc.record({
  entries: fc.array(fc.oneof({ weight: 3, arbitrary: fc.constant("phase" as const) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }) }), { minLength: 1, maxLength: 4 }),
  loopable: fc.boolean(),
  maxLoops: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
});

/** Workflows w0…wn; wi references only later ones (no cycles). w0 starts on w1, w1 ends on w2: depth ≥ 3. */
export function buildDefinitions(shapes: WorkflowShape[]): Record<string, unknown> {
  const n = shapes.length;
  const defs: Record<string, unknown> = {};
  shapes.forEach((shape, i) => {
    const phases = shape.entries.map((e, k) => (e === "phase" || i + e >= n ? { id: `p${i}x${k}`, name: `Phase ${i}.${k}` } : { subworkflow: `w${i + e}` }));
    if (i === 0) phases[0] = { subworkflow: "w1" };
    if (i === 1) phases[phases.length - 1] = { subworkflow: "w2" };
    if (i === n - 1 && phases.every((p) => "subworkflow" in p)) phases.push({ id: `p${i}last`, name: "Last" });
    defs[`w${i}`] = { name: `Workflow ${i}`, show: i === 0, loopable: shape.loopable, ...(shape.maxLoops === undefined ? {} : { maxLoops: shape.maxLoops }), phases };
  });
  return defs;
}

